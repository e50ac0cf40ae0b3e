-- genhost schema, version 1: organizations, API keys, settings, tasks and the queue.
--
-- The queue lives in `tasks`. A task holds a concurrency slot of its (organization, limit key)
-- while it is PENDING or RUNNING; `concurrency_slots.active` counts those slots so the THROTTLED
-- decision is O(1). Daily generation counts are kept in 15-minute buckets
-- (`daily_generations`); a bucket counts while its start lies within the last 24 h 15 min, so the
-- rolling 24-hour limit is conservative by at most one bucket (docs/decisions.md).

CREATE TABLE organizations (
    id uuid PRIMARY KEY,
    name text NOT NULL UNIQUE,
    tier integer NOT NULL CHECK (tier > 0),
    status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
    id uuid PRIMARY KEY,
    org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    key_hash bytea NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    disabled_at timestamptz
);
CREATE INDEX api_keys_org ON api_keys (org_id);

CREATE TABLE settings (
    name text PRIMARY KEY,
    value text NOT NULL
);

CREATE TABLE tasks (
    id uuid PRIMARY KEY,
    org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    endpoint text NOT NULL,
    model text NOT NULL,
    limit_key text NOT NULL,
    status text NOT NULL CHECK (status IN ('PENDING', 'THROTTLED', 'RUNNING', 'SUCCEEDED',
                                           'FAILED', 'CANCELLED')),
    input jsonb NOT NULL,
    estimated_credits double precision NOT NULL,
    progress real,
    outputs jsonb,
    failure text,
    failure_code text,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    started_at timestamptz,
    finished_at timestamptz,
    lease_owner text,
    lease_expires_at timestamptz,
    attempts integer NOT NULL DEFAULT 0,
    deleted boolean NOT NULL DEFAULT false
);
CREATE INDEX tasks_pending ON tasks (created_at, id) WHERE status = 'PENDING';
CREATE INDEX tasks_throttled ON tasks (org_id, limit_key, created_at, id) WHERE status = 'THROTTLED';
CREATE INDEX tasks_running ON tasks (lease_owner, lease_expires_at) WHERE status = 'RUNNING';
CREATE INDEX tasks_finished ON tasks (finished_at) WHERE finished_at IS NOT NULL;

CREATE TABLE concurrency_slots (
    org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    limit_key text NOT NULL,
    active integer NOT NULL DEFAULT 0 CHECK (active >= 0),
    PRIMARY KEY (org_id, limit_key)
);

CREATE TABLE daily_generations (
    org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    model text NOT NULL,
    bucket timestamptz NOT NULL,
    count integer NOT NULL,
    PRIMARY KEY (org_id, model, bucket)
);

-- genhost_bucket returns the start of the 15-minute bucket holding `t`.
CREATE FUNCTION genhost_bucket(t timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE AS $$
    SELECT date_trunc('hour', t) + floor(extract(minute FROM t) / 15) * interval '15 minutes'
$$;

-- genhost_create_task stores a task, PENDING when its organization has a free slot for the limit
-- key (and nobody is queued before it), THROTTLED otherwise. Returns ('rate_limited',
-- retry-after seconds) without storing anything when the rolling 24-hour generation count of
-- the model would exceed p_max_daily.
CREATE FUNCTION genhost_create_task(p_id uuid, p_org uuid, p_endpoint text, p_model text,
                                    p_limit_key text, p_input jsonb, p_credits double precision,
                                    p_max_concurrent integer, p_max_daily integer)
RETURNS TABLE (result text, retry_after integer, created_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    v_bucket timestamptz := genhost_bucket(now());
    v_used bigint;
    v_oldest timestamptz;
    v_status text := 'THROTTLED';
    v_created timestamptz;
BEGIN
    INSERT INTO daily_generations AS d (org_id, model, bucket, count)
    VALUES (p_org, p_model, v_bucket, 1)
    ON CONFLICT (org_id, model, bucket) DO UPDATE SET count = d.count + 1;

    SELECT sum(d.count), min(d.bucket) INTO v_used, v_oldest
    FROM daily_generations d
    WHERE d.org_id = p_org AND d.model = p_model
      AND d.bucket > now() - interval '24 hours 15 minutes' AND d.count > 0;

    IF v_used > p_max_daily THEN
        UPDATE daily_generations d SET count = d.count - 1
        WHERE d.org_id = p_org AND d.model = p_model AND d.bucket = v_bucket;
        RETURN QUERY SELECT 'rate_limited'::text,
            greatest(1, ceil(extract(epoch FROM v_oldest + interval '24 hours 15 minutes' - now())))::integer,
            NULL::timestamptz;
        RETURN;
    END IF;

    IF NOT EXISTS (SELECT 1 FROM tasks t WHERE t.status = 'THROTTLED' AND t.org_id = p_org
                   AND t.limit_key = p_limit_key) THEN
        UPDATE concurrency_slots s SET active = s.active + 1
        WHERE s.org_id = p_org AND s.limit_key = p_limit_key AND s.active < p_max_concurrent;
        IF FOUND THEN
            v_status := 'PENDING';
        ELSIF p_max_concurrent > 0 AND NOT EXISTS (
                SELECT 1 FROM concurrency_slots s
                WHERE s.org_id = p_org AND s.limit_key = p_limit_key) THEN
            INSERT INTO concurrency_slots (org_id, limit_key, active)
            VALUES (p_org, p_limit_key, 0)
            ON CONFLICT (org_id, limit_key) DO NOTHING;
            UPDATE concurrency_slots s SET active = s.active + 1
            WHERE s.org_id = p_org AND s.limit_key = p_limit_key
              AND s.active < p_max_concurrent;
            IF FOUND THEN
                v_status := 'PENDING';
            END IF;
        END IF;
    END IF;

    INSERT INTO tasks (id, org_id, endpoint, model, limit_key, status, input, estimated_credits)
    VALUES (p_id, p_org, p_endpoint, p_model, p_limit_key, v_status, p_input, p_credits)
    RETURNING tasks.created_at INTO v_created;

    IF v_status = 'PENDING' THEN
        PERFORM pg_notify('genhost_tasks', '');
    END IF;
    RETURN QUERY SELECT v_status, 0, v_created;
END
$$;

-- genhost_release_slot hands a freed slot to the oldest THROTTLED task of the same organization
-- and limit key, or gives it back.
CREATE FUNCTION genhost_release_slot(p_org uuid, p_limit_key text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_next uuid;
BEGIN
    PERFORM 1 FROM concurrency_slots s WHERE s.org_id = p_org AND s.limit_key = p_limit_key
        FOR UPDATE;
    SELECT t.id INTO v_next FROM tasks t
    WHERE t.status = 'THROTTLED' AND t.org_id = p_org AND t.limit_key = p_limit_key
    ORDER BY t.created_at, t.id LIMIT 1 FOR UPDATE SKIP LOCKED;
    IF v_next IS NOT NULL THEN
        UPDATE tasks SET status = 'PENDING' WHERE id = v_next;
        PERFORM pg_notify('genhost_tasks', '');
    ELSE
        UPDATE concurrency_slots s SET active = greatest(s.active - 1, 0)
        WHERE s.org_id = p_org AND s.limit_key = p_limit_key;
    END IF;
END
$$;

-- genhost_finish_task ends a RUNNING task this owner still holds (compare-and-set on the lease);
-- false when the task was cancelled or re-queued meanwhile.
CREATE FUNCTION genhost_finish_task(p_id uuid, p_owner text, p_status text, p_outputs jsonb,
                                    p_failure text, p_failure_code text)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_org uuid;
    v_key text;
BEGIN
    UPDATE tasks SET status = p_status, outputs = p_outputs, failure = p_failure,
                     failure_code = p_failure_code, finished_at = now(), progress = NULL,
                     lease_owner = NULL, lease_expires_at = NULL
    WHERE id = p_id AND status = 'RUNNING' AND lease_owner = p_owner
    RETURNING org_id, limit_key INTO v_org, v_key;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM genhost_release_slot(v_org, v_key);
    RETURN true;
END
$$;

-- genhost_cancel_task stops an unfinished task. With p_delete (DELETE /v1/tasks/{id}) the task
-- also disappears from the API; a finished task is deleted and its output names returned so the
-- caller removes the files. p_org NULL means any organization (operator commands).
-- Results: not_found, cancelled, deleted, finished (p_delete false and the task had ended).
CREATE FUNCTION genhost_cancel_task(p_id uuid, p_org uuid, p_delete boolean)
RETURNS TABLE (result text, outputs jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    v_status text;
    v_outputs jsonb;
    v_org uuid;
    v_key text;
BEGIN
    SELECT t.status, t.outputs, t.org_id, t.limit_key INTO v_status, v_outputs, v_org, v_key
    FROM tasks t
    WHERE t.id = p_id AND (p_org IS NULL OR t.org_id = p_org) AND NOT t.deleted
    FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'not_found'::text, NULL::jsonb;
        RETURN;
    END IF;
    IF v_status IN ('PENDING', 'THROTTLED', 'RUNNING') THEN
        UPDATE tasks SET status = 'CANCELLED', deleted = p_delete, finished_at = now(),
                         progress = NULL, lease_owner = NULL, lease_expires_at = NULL
        WHERE id = p_id;
        IF v_status <> 'THROTTLED' THEN
            PERFORM genhost_release_slot(v_org, v_key);
        END IF;
        PERFORM pg_notify('genhost_cancel', p_id::text);
        RETURN QUERY SELECT 'cancelled'::text, NULL::jsonb;
    ELSIF p_delete THEN
        DELETE FROM tasks WHERE id = p_id;
        RETURN QUERY SELECT 'deleted'::text, v_outputs;
    ELSE
        RETURN QUERY SELECT 'finished'::text, NULL::jsonb;
    END IF;
END
$$;

-- genhost_requeue_expired puts RUNNING tasks whose lease ran out (their process died or hung)
-- back in the queue; a task that already used p_max_attempts fails with INTERNAL instead.
-- Returns the number of tasks re-queued.
CREATE FUNCTION genhost_requeue_expired(p_max_attempts integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    v_count integer;
    r record;
BEGIN
    WITH expired AS (
        SELECT id FROM tasks
        WHERE status = 'RUNNING' AND lease_expires_at < now() AND attempts < p_max_attempts
        FOR UPDATE SKIP LOCKED
    )
    UPDATE tasks t SET status = 'PENDING', lease_owner = NULL, lease_expires_at = NULL,
                       progress = NULL
    FROM expired WHERE t.id = expired.id;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    IF v_count > 0 THEN
        PERFORM pg_notify('genhost_tasks', '');
    END IF;

    FOR r IN
        SELECT id, org_id, limit_key FROM tasks
        WHERE status = 'RUNNING' AND lease_expires_at < now() AND attempts >= p_max_attempts
        FOR UPDATE SKIP LOCKED
    LOOP
        UPDATE tasks SET status = 'FAILED', finished_at = now(), progress = NULL,
                         lease_owner = NULL, lease_expires_at = NULL,
                         failure = 'The task was interrupted too many times and could not finish.',
                         failure_code = 'INTERNAL'
        WHERE id = r.id;
        PERFORM genhost_release_slot(r.org_id, r.limit_key);
    END LOOP;
    RETURN v_count;
END
$$;

-- genhost_promote_throttled recounts the slots of one organization and limit key from the tasks
-- themselves and promotes the oldest THROTTLED tasks while slots are free under p_limit. It
-- repairs the rare race where a slot was released while a THROTTLED task was being stored.
-- Returns the number of tasks promoted.
CREATE FUNCTION genhost_promote_throttled(p_org uuid, p_limit_key text, p_limit integer)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    v_active integer;
    v_promoted integer;
BEGIN
    INSERT INTO concurrency_slots (org_id, limit_key, active) VALUES (p_org, p_limit_key, 0)
    ON CONFLICT (org_id, limit_key) DO NOTHING;
    PERFORM 1 FROM concurrency_slots s WHERE s.org_id = p_org AND s.limit_key = p_limit_key
        FOR UPDATE;
    SELECT count(*) INTO v_active FROM tasks t
    WHERE t.org_id = p_org AND t.limit_key = p_limit_key AND t.status IN ('PENDING', 'RUNNING');

    WITH next AS (
        SELECT t.id FROM tasks t
        WHERE t.status = 'THROTTLED' AND t.org_id = p_org AND t.limit_key = p_limit_key
        ORDER BY t.created_at, t.id
        LIMIT greatest(p_limit - v_active, 0)
        FOR UPDATE SKIP LOCKED
    )
    UPDATE tasks t SET status = 'PENDING' FROM next WHERE t.id = next.id;
    GET DIAGNOSTICS v_promoted = ROW_COUNT;

    UPDATE concurrency_slots s SET active = v_active + v_promoted
    WHERE s.org_id = p_org AND s.limit_key = p_limit_key;
    IF v_promoted > 0 THEN
        PERFORM pg_notify('genhost_tasks', '');
    END IF;
    RETURN v_promoted;
END
$$;
