ALTER TABLE "probe_schedule" ADD COLUMN "phase" double precision;--> statement-breakpoint
ALTER TABLE "replicas" ADD COLUMN "host" text;--> statement-breakpoint
ALTER TABLE "replicas" ADD COLUMN "pid" integer;