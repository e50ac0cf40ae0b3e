-- The leased-job engine (docs/architecture.md, "Background jobs"): background work on a subject
-- (an avatar to process; later a voice to analyse, a document to index, a session to run) is one
-- row per (kind, subject). Any node claims a row with FOR UPDATE SKIP LOCKED under a lease it
-- renews by heartbeat; a row whose lease expired (its node died) is claimed again. Ending a job
-- is a compare-and-set on (revision, lease owner): when the subject changed meanwhile its row
-- was re-queued with the new revision, the run that worked on the old one ends without effect,
-- and the new revision is processed next.
CREATE TABLE jobs (
    kind text NOT NULL,
    subject text NOT NULL,
    revision bigint NOT NULL,
    status text NOT NULL CHECK (status IN ('PENDING', 'RUNNING', 'FAILED')),
    attempts integer NOT NULL DEFAULT 0,   -- runs of this revision so far
    run_after timestamptz NOT NULL DEFAULT clock_timestamp(),
    lease_owner text,
    lease_expires_at timestamptz,
    last_error text,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (kind, subject),
    CHECK ((status = 'RUNNING') = (lease_owner IS NOT NULL))
);
-- The claim: the oldest due job of the kinds a node runs, and runs whose node died.
CREATE INDEX jobs_due ON jobs (run_after) WHERE status = 'PENDING';
CREATE INDEX jobs_leased ON jobs (lease_expires_at) WHERE status = 'RUNNING';

-- genhost_enqueue_job queues revision p_revision of (p_kind, p_subject): a new row, or the
-- existing row reset to PENDING with that revision (a run of an older revision then fails its
-- compare-and-set), and wakes the nodes.
CREATE FUNCTION genhost_enqueue_job(p_kind text, p_subject text, p_revision bigint)
RETURNS void LANGUAGE sql AS $$
    INSERT INTO jobs (kind, subject, revision, status)
    VALUES (p_kind, p_subject, p_revision, 'PENDING')
    ON CONFLICT (kind, subject) DO UPDATE
        SET revision = EXCLUDED.revision, status = 'PENDING', attempts = 0,
            run_after = clock_timestamp(), lease_owner = NULL, lease_expires_at = NULL,
            last_error = NULL, updated_at = clock_timestamp();
    SELECT pg_notify('genhost_jobs', p_kind);
$$;

-- Avatars: every write that leaves an avatar PROCESSING (a create, an update) queues its
-- processing in the same transaction; a deleted avatar takes its job with it.
CREATE FUNCTION genhost_avatar_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM jobs WHERE kind = 'avatar' AND subject = OLD.id::text;
        RETURN OLD;
    END IF;
    IF NEW.status = 'PROCESSING' AND
       (TG_OP = 'INSERT' OR OLD.revision IS DISTINCT FROM NEW.revision OR OLD.status <> 'PROCESSING') THEN
        PERFORM genhost_enqueue_job('avatar', NEW.id::text, NEW.revision);
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER avatars_jobs AFTER INSERT OR UPDATE OR DELETE ON avatars
    FOR EACH ROW EXECUTE FUNCTION genhost_avatar_jobs();

-- Avatars that were PROCESSING before this migration are queued too.
INSERT INTO jobs (kind, subject, revision, status)
SELECT 'avatar', id::text, revision, 'PENDING' FROM avatars WHERE status = 'PROCESSING'
ON CONFLICT (kind, subject) DO NOTHING;
