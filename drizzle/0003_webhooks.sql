CREATE TABLE "webhook_deliveries" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "webhook_deliveries_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"webhook_id" uuid NOT NULL,
	"event_id" bigint NOT NULL,
	"event_at" timestamp with time zone NOT NULL,
	"kind" text NOT NULL,
	"order_key" text NOT NULL,
	"body" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_at" timestamp with time zone NOT NULL,
	"deadline" timestamp with time zone NOT NULL,
	"claimed_by" text,
	"claimed_until" timestamp with time zone,
	"last_error" text,
	"created_at" timestamp with time zone NOT NULL,
	"done_at" timestamp with time zone,
	CONSTRAINT "webhook_deliveries_event_uq" UNIQUE("webhook_id","event_id")
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"url" text NOT NULL,
	"events" jsonb NOT NULL,
	"routes" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"format" text NOT NULL,
	"secret_enc" text NOT NULL,
	"delivered" bigint DEFAULT 0 NOT NULL,
	"failed_attempts" bigint DEFAULT 0 NOT NULL,
	"dead_letters" bigint DEFAULT 0 NOT NULL,
	"last_delivered_at" timestamp with time zone,
	"last_error" text,
	"last_error_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "webhooks_name_unique" UNIQUE("name")
);
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "webhook_pending" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_webhook_id_webhooks_id_fk" FOREIGN KEY ("webhook_id") REFERENCES "public"."webhooks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_order_idx" ON "webhook_deliveries" USING btree ("webhook_id","order_key","event_id") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_done_idx" ON "webhook_deliveries" USING btree ("done_at") WHERE done_at is not null;--> statement-breakpoint
CREATE INDEX "events_webhook_pending_idx" ON "events" USING btree ("id") WHERE webhook_pending;