-- Custom voices (/v1/voices, docs/voices.md).
--
-- A voice is stored PROCESSING by POST /v1/voices: cloned from a speech sample (`source` audio:
-- the sample's bytes are in the output store as `voice-<id>/<sample_name>`, or `sample_uri` is a
-- URL a worker fetches) or designed from a description (`source` text: `model` and `prompt`).
-- Its job of kind `voice` (migrations/0007_jobs.sql) analyses the sample or reads the
-- description, and ends it READY with `profile` (what drives synthesis, media/voice_profile.hpp)
-- and a preview (`voice-<id>/preview.mp3`), or FAILED with `failure_reason`. Renaming does not
-- change `revision`; nothing else about a voice can change.
CREATE TABLE voices (
    id uuid PRIMARY KEY,
    org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name text NOT NULL,
    description text,
    source text NOT NULL CHECK (source IN ('audio', 'text')),
    model text,                 -- text: voice_ttv_v3 or voice_multilingual_ttv_v2
    prompt text,                -- text: the description
    sample_name text,           -- audio: the stored sample
    sample_uri text,            -- audio: a URL still to fetch
    status text NOT NULL CHECK (status IN ('PROCESSING', 'READY', 'FAILED')),
    failure_reason text,
    profile jsonb,              -- READY
    revision bigint NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    CHECK ((status = 'FAILED') = (failure_reason IS NOT NULL)),
    CHECK ((status = 'READY') = (profile IS NOT NULL))
);
CREATE INDEX voices_org_created ON voices (org_id, created_at DESC, id DESC);

CREATE FUNCTION genhost_voice_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM jobs WHERE kind = 'voice' AND subject = OLD.id::text;
        RETURN OLD;
    END IF;
    IF NEW.status = 'PROCESSING' AND
       (TG_OP = 'INSERT' OR OLD.revision IS DISTINCT FROM NEW.revision) THEN
        PERFORM genhost_enqueue_job('voice', NEW.id::text, NEW.revision);
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER voices_jobs AFTER INSERT OR UPDATE OR DELETE ON voices
    FOR EACH ROW EXECUTE FUNCTION genhost_voice_jobs();

-- Objects of the output store that expire (a voice preview of POST /v1/voices/preview): a job of
-- kind `output_expiry` whose subject is the object's folder, due when it expires; its run
-- deletes the folder. Queuing the same folder again moves its expiry.
CREATE FUNCTION genhost_expire_output(p_folder text, p_after interval) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO jobs (kind, subject, revision, status, run_after)
    VALUES ('output_expiry', p_folder, 1, 'PENDING', clock_timestamp() + p_after)
    ON CONFLICT (kind, subject) DO UPDATE
        SET status = 'PENDING', attempts = 0, run_after = EXCLUDED.run_after,
            lease_owner = NULL, lease_expires_at = NULL, last_error = NULL,
            updated_at = clock_timestamp();
$$;
