ALTER TABLE "probe_results" ADD COLUMN "checks" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "probe_schedule" ADD COLUMN "regular_at" timestamp with time zone;