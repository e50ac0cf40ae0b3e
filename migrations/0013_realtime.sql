-- Realtime avatar sessions and their conversations (/v1/realtime_sessions,
-- /v1/avatar_conversations, /v1/avatar_usage; docs/realtime.md).
--
-- One row per session; the conversation has the same id and lives in the same row (its status is
-- derived from the session's). POST /v1/realtime_sessions stores it NOT_READY and queues its job
-- of kind `realtime_session` in the same transaction. Any node's realtime engine claims the job
-- under a lease and keeps it for the whole session: it admits the session against the
-- organization's concurrency (`genhost_admit_realtime_session`: the session's `owner` is set,
-- else it stays `queued`), makes it READY with a session key, RUNNING once a participant joined,
-- and ends it COMPLETED, FAILED or CANCELLED. A node that dies leaves its lease to expire; the
-- next claim finds the session owned by another node and ends it FAILED (INTERNAL.NODE_LOST), so
-- nothing stays RUNNING for ever.
CREATE TABLE realtime_sessions (
    id uuid PRIMARY KEY,
    org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    status text NOT NULL DEFAULT 'NOT_READY'
        CHECK (status IN ('NOT_READY', 'READY', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED')),
    queued boolean NOT NULL DEFAULT false,  -- NOT_READY: refused admission at least once
    model text NOT NULL,
    avatar_type text NOT NULL CHECK (avatar_type IN ('service-preset', 'custom')),
    preset_id text,                         -- service-preset
    avatar_id uuid,                         -- custom (no reference: the avatar may be deleted)
    avatar_name text NOT NULL,              -- the avatar's name when the session was created
    name text NOT NULL,                     -- the conversation's name
    max_duration integer NOT NULL CHECK (max_duration BETWEEN 10 AND 1800),
    personality text,                       -- overrides the avatar's
    start_script text,                      -- overrides the avatar's
    tools jsonb NOT NULL DEFAULT '[]',
    integration jsonb,                      -- integration, or the deprecated rtcroom as one
    owner text,                             -- the node running it, once admitted
    session_key text,                       -- READY: the bearer of /consume
    expires_at timestamptz,                 -- READY: when an unjoined session ends
    media_url text,                         -- the owner's media plane
    consumed_at timestamptz,
    backend_connected boolean NOT NULL DEFAULT false,  -- a backend tool handler is in the room
    started_at timestamptz,                 -- RUNNING: the first participant joined
    ended_at timestamptz,
    duration integer,                       -- seconds, once it ran
    failure text,
    failure_code text,
    recording_name text,                    -- the output store object of the recording
    CHECK ((status = 'FAILED') = (failure IS NOT NULL AND failure_code IS NOT NULL)),
    CHECK ((avatar_type = 'custom') = (avatar_id IS NOT NULL))
);
-- GET /v1/avatar_conversations (newest first, keyset), by avatar, and usage by day.
CREATE INDEX realtime_sessions_org_created ON realtime_sessions (org_id, created_at DESC, id DESC);
CREATE INDEX realtime_sessions_org_avatar ON realtime_sessions (org_id, avatar_id, created_at DESC, id DESC)
    WHERE avatar_id IS NOT NULL;
-- The admission count: an organization's sessions that hold a place.
CREATE INDEX realtime_sessions_active ON realtime_sessions (org_id)
    WHERE status IN ('NOT_READY', 'READY', 'RUNNING');

-- The transcript: at most 1000 entries (the writer stops adding at 1000).
CREATE TABLE conversation_entries (
    session_id uuid NOT NULL REFERENCES realtime_sessions (id) ON DELETE CASCADE,
    seq integer NOT NULL CHECK (seq BETWEEN 0 AND 999),
    role text NOT NULL CHECK (role IN ('user', 'assistant')),
    content text,
    at timestamptz,
    tool_calls jsonb,    -- assistant entries only
    tool_results jsonb,  -- assistant entries only
    PRIMARY KEY (session_id, seq)
);

-- A new session queues its job; a deleted one takes its job with it; a session that ends wakes
-- the sessions of its organization that wait for a place.
CREATE FUNCTION genhost_realtime_session_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM jobs WHERE kind = 'realtime_session' AND subject = OLD.id::text;
        RETURN OLD;
    END IF;
    IF TG_OP = 'INSERT' THEN
        PERFORM genhost_enqueue_job('realtime_session', NEW.id::text, 1);
        RETURN NEW;
    END IF;
    IF OLD.status IN ('NOT_READY', 'READY', 'RUNNING') AND
       NEW.status IN ('COMPLETED', 'FAILED', 'CANCELLED') THEN
        UPDATE jobs SET run_after = clock_timestamp()
        WHERE kind = 'realtime_session' AND status = 'PENDING'
          AND subject IN (SELECT id::text FROM realtime_sessions
                          WHERE org_id = NEW.org_id AND status = 'NOT_READY' AND queued);
        IF FOUND THEN
            PERFORM pg_notify('genhost_jobs', 'realtime_session');
        END IF;
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER realtime_sessions_jobs AFTER INSERT OR UPDATE OF status OR DELETE
    ON realtime_sessions FOR EACH ROW EXECUTE FUNCTION genhost_realtime_session_jobs();

-- genhost_admit_realtime_session gives session p_id a place for node p_owner when its
-- organization holds fewer than p_limit (NOT_READY admitted, READY or RUNNING sessions) and no
-- older session of it waits: 'admitted'. Otherwise the session is marked queued: 'queued'.
-- 'taken' when another node admitted it (that node died: the caller ends it), 'ended' when it
-- is no longer NOT_READY (cancelled), 'gone' when it was deleted.
CREATE FUNCTION genhost_admit_realtime_session(p_id uuid, p_owner text, p_limit integer)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    s realtime_sessions%ROWTYPE;
    held integer;
BEGIN
    SELECT * INTO s FROM realtime_sessions WHERE id = p_id FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'gone';
    END IF;
    IF s.owner IS NOT NULL AND s.owner <> p_owner AND s.status IN ('NOT_READY', 'READY', 'RUNNING') THEN
        RETURN 'taken';
    END IF;
    IF s.status <> 'NOT_READY' THEN
        RETURN 'ended';
    END IF;
    -- One admission at a time per organization, so two nodes never both take the last place.
    PERFORM pg_advisory_xact_lock(hashtext('genhost_realtime:' || s.org_id::text));
    SELECT count(*) INTO held FROM realtime_sessions
    WHERE org_id = s.org_id AND status IN ('NOT_READY', 'READY', 'RUNNING')
      AND owner IS NOT NULL AND id <> p_id;
    IF held >= p_limit OR EXISTS (
        SELECT 1 FROM realtime_sessions
        WHERE org_id = s.org_id AND status = 'NOT_READY' AND owner IS NULL AND queued
          AND (created_at, id) < (s.created_at, s.id)) THEN
        UPDATE realtime_sessions SET queued = true WHERE id = p_id;
        RETURN 'queued';
    END IF;
    UPDATE realtime_sessions SET owner = p_owner, queued = false WHERE id = p_id;
    RETURN 'admitted';
END;
$$;
