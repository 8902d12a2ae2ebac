CREATE TABLE "lines" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"tier" text NOT NULL,
	"protocol" text NOT NULL,
	"base_url" text NOT NULL,
	"model" text NOT NULL,
	"api_key_enc" text,
	"headers" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"probe_interval_sec" integer DEFAULT 45 NOT NULL,
	"timeout_ms" integer,
	"daily_quota" integer,
	"probe_budget_pct" real DEFAULT 5 NOT NULL,
	"max_share" real,
	"admin_state" text DEFAULT 'active' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "lines_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "route_lines" (
	"route_name" text NOT NULL,
	"line_id" uuid NOT NULL,
	"weight" integer NOT NULL,
	CONSTRAINT "route_lines_route_name_line_id_pk" PRIMARY KEY("route_name","line_id")
);
--> statement-breakpoint
CREATE TABLE "routes" (
	"name" text PRIMARY KEY NOT NULL,
	"free_share_cap" real DEFAULT 0.2 NOT NULL,
	"on_all_down" text DEFAULT 'fail-open' NOT NULL,
	"policy" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "samples" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"protocol" text NOT NULL,
	"routes" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"request" jsonb NOT NULL,
	"expect" jsonb NOT NULL,
	"timeout_ms" integer,
	"weight" real DEFAULT 1 NOT NULL,
	"source" text DEFAULT 'api' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "samples_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "probe_results" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"line_id" uuid NOT NULL,
	"sample_id" uuid NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"latency_ms" integer NOT NULL,
	"status" integer,
	"error_class" text,
	"hard_failure" boolean NOT NULL,
	"passed" boolean NOT NULL,
	"score" real NOT NULL,
	"components" jsonb NOT NULL,
	"content_length" integer NOT NULL,
	"content_hash" text,
	"excerpt" text DEFAULT '' NOT NULL,
	"reasons" jsonb NOT NULL,
	"tokens" integer,
	"slot" bigint,
	"trigger" text DEFAULT 'schedule' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "line_health" (
	"line_id" uuid PRIMARY KEY NOT NULL,
	"health" jsonb NOT NULL,
	"state" text NOT NULL,
	"score" real,
	"revision" integer DEFAULT 0 NOT NULL,
	"tick_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "published_tables" (
	"route_name" text PRIMARY KEY NOT NULL,
	"version" bigint NOT NULL,
	"generated_at" timestamp with time zone NOT NULL,
	"mode" text NOT NULL,
	"lines" jsonb DEFAULT '[]'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"at" timestamp with time zone NOT NULL,
	"kind" text NOT NULL,
	"line_id" uuid,
	"route_name" text,
	"reason" text NOT NULL,
	"data" jsonb NOT NULL,
	"dedupe_key" text,
	CONSTRAINT "events_dedupe_key_unique" UNIQUE("dedupe_key")
);
--> statement-breakpoint
CREATE TABLE "tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"role" text NOT NULL,
	"hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "tokens_name_unique" UNIQUE("name"),
	CONSTRAINT "tokens_hash_unique" UNIQUE("hash")
);
--> statement-breakpoint
CREATE TABLE "probe_schedule" (
	"line_id" uuid NOT NULL,
	"sample_id" uuid NOT NULL,
	"next_at" timestamp with time zone NOT NULL,
	"trigger" text DEFAULT 'schedule' NOT NULL,
	"claimed_by" text,
	"claimed_until" timestamp with time zone,
	CONSTRAINT "probe_schedule_line_id_sample_id_pk" PRIMARY KEY("line_id","sample_id")
);
--> statement-breakpoint
ALTER TABLE "route_lines" ADD CONSTRAINT "route_lines_route_name_routes_name_fk" FOREIGN KEY ("route_name") REFERENCES "public"."routes"("name") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "route_lines" ADD CONSTRAINT "route_lines_line_id_lines_id_fk" FOREIGN KEY ("line_id") REFERENCES "public"."lines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "probe_results" ADD CONSTRAINT "probe_results_line_id_lines_id_fk" FOREIGN KEY ("line_id") REFERENCES "public"."lines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "probe_results" ADD CONSTRAINT "probe_results_sample_id_samples_id_fk" FOREIGN KEY ("sample_id") REFERENCES "public"."samples"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "line_health" ADD CONSTRAINT "line_health_line_id_lines_id_fk" FOREIGN KEY ("line_id") REFERENCES "public"."lines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "probe_schedule" ADD CONSTRAINT "probe_schedule_line_id_lines_id_fk" FOREIGN KEY ("line_id") REFERENCES "public"."lines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "probe_schedule" ADD CONSTRAINT "probe_schedule_sample_id_samples_id_fk" FOREIGN KEY ("sample_id") REFERENCES "public"."samples"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "route_lines_line_idx" ON "route_lines" USING btree ("line_id");--> statement-breakpoint
CREATE INDEX "probe_results_line_time_idx" ON "probe_results" USING btree ("line_id","started_at");--> statement-breakpoint
CREATE INDEX "probe_results_line_sample_time_idx" ON "probe_results" USING btree ("line_id","sample_id","started_at");--> statement-breakpoint
CREATE INDEX "probe_results_time_idx" ON "probe_results" USING btree ("started_at");--> statement-breakpoint
CREATE UNIQUE INDEX "probe_results_slot_uq" ON "probe_results" USING btree ("line_id","sample_id","slot");--> statement-breakpoint
CREATE INDEX "line_health_tick_idx" ON "line_health" USING btree ("tick_at");--> statement-breakpoint
CREATE INDEX "events_at_idx" ON "events" USING btree ("at");--> statement-breakpoint
CREATE INDEX "events_line_idx" ON "events" USING btree ("line_id","id");--> statement-breakpoint
CREATE INDEX "events_kind_idx" ON "events" USING btree ("kind","id");--> statement-breakpoint
CREATE INDEX "probe_schedule_due_idx" ON "probe_schedule" USING btree ("next_at");