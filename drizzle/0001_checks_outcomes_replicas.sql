CREATE TABLE "line_outcomes" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "line_outcomes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"router_id" text NOT NULL,
	"window_id" text NOT NULL,
	"line_id" uuid NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"window_end" timestamp with time zone NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	"counts" jsonb NOT NULL,
	"requests" integer NOT NULL,
	"prompt_tokens" bigint NOT NULL,
	"completion_tokens" bigint NOT NULL,
	"latency_ms_sum" bigint NOT NULL,
	"ttfb_ms_sum" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "replicas" (
	"id" text PRIMARY KEY NOT NULL,
	"heartbeat_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "lines" ADD COLUMN "headers_enc" text;--> statement-breakpoint
ALTER TABLE "probe_results" ADD COLUMN "checks" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "probe_schedule" ADD COLUMN "regular_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "probe_schedule" ADD COLUMN "fast_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "line_outcomes" ADD CONSTRAINT "line_outcomes_line_id_lines_id_fk" FOREIGN KEY ("line_id") REFERENCES "public"."lines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "line_outcomes_window_uq" ON "line_outcomes" USING btree ("router_id","window_id","line_id");--> statement-breakpoint
CREATE INDEX "line_outcomes_line_end_idx" ON "line_outcomes" USING btree ("line_id","window_end");--> statement-breakpoint
CREATE INDEX "line_outcomes_received_idx" ON "line_outcomes" USING btree ("received_at");