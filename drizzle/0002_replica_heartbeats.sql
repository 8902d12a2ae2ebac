CREATE TABLE "replicas" (
	"id" text PRIMARY KEY NOT NULL,
	"heartbeat_at" timestamp with time zone NOT NULL
);
