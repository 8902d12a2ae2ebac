ALTER TABLE "probe_results" ADD COLUMN "relay" jsonb;--> statement-breakpoint
ALTER TABLE "samples" ADD COLUMN "variants" jsonb DEFAULT '[]'::jsonb NOT NULL;