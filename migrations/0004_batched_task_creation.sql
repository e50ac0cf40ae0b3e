-- Task creation in batches (group commit).
--
-- A busy node gathers the creations that arrive while the database is busy and stores them with
-- one call of genhost_create_tasks, in one transaction: one round trip and one commit for the
-- batch, the rolling 24-hour count read once per (organization, model) of the batch and
-- incremented once, and one multi-row INSERT. The rules are those of genhost_create_task, task by
-- task in the batch's order:
--   * rolling daily limit: the window's sum is read without a lock while it is more than
--     k_margin below the limit after this batch's own creations; a transaction holds at most
--     kMaxBatch (64, src/store/tasks_repo.cpp) uncommitted creations, so with fewer than 256
--     sessions creating at once no other transaction can take the limit past it unseen. Nearer
--     the limit the (organization, model) advisory lock is taken and the sum re-read: exact.
--   * concurrency: a task is PENDING when nobody of its (organization, limit key) waits and a
--     slot is free, THROTTLED otherwise; once one task of a group in the batch is THROTTLED the
--     later ones are too (oldest first).
-- p_tasks is a JSON array of {id, org_id, endpoint, model, limit_key, input, credits,
-- max_concurrent, max_daily}. Rows come back in the array's order: (status, 0, created_at) for
-- a stored task, ('rate_limited', retry-after seconds, NULL) for a refused one, which is not
-- stored. genhost_create_task stays for nodes of an earlier version during a rolling upgrade.

CREATE FUNCTION genhost_create_tasks(p_tasks jsonb)
RETURNS TABLE (result text, retry_after integer, created_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    k_margin constant integer := 256 * 64;
    k_window constant interval := interval '24 hours 15 minutes';
    -- genhost_bucket(now()), written out: a SQL function called from PL/pgSQL is parsed anew on
    -- every call (about 90 us, measured).
    v_bucket timestamptz := date_trunc('hour', now())
                            + floor(extract(minute FROM now()) / 15) * interval '15 minutes';
    v_shard smallint := (pg_backend_pid() % 16)::smallint;
    v_n integer := jsonb_array_length(p_tasks);
    v_task jsonb;
    v_org uuid;
    v_model text;
    v_limit_key text;
    v_count_key text;
    v_slot_key text;
    v_in_batch jsonb;
    v_used jsonb := '{}';     -- count key -> the window's sum including this batch
    v_oldest jsonb := '{}';   -- count key -> the window's oldest bucket (epoch seconds)
    v_added jsonb := '{}';    -- count key -> creations this batch adds
    v_waiting jsonb := '{}';  -- slot key -> true when a task of the group waits
    v_sum bigint;
    v_min timestamptz;
    v_status text;
    v_statuses text[] := array_fill(NULL::text, ARRAY[v_n]);
    v_retry integer[] := array_fill(0, ARRAY[v_n]);
    v_any_pending boolean := false;
BEGIN
    SELECT jsonb_object_agg(g.k, g.n) INTO v_in_batch
    FROM (SELECT (e->>'org_id') || '/' || (e->>'model') AS k, count(*) AS n
          FROM jsonb_array_elements(p_tasks) e GROUP BY 1) g;

    FOR i IN 1 .. v_n LOOP
        v_task := p_tasks -> (i - 1);
        v_org := (v_task->>'org_id')::uuid;
        v_model := v_task->>'model';
        v_limit_key := v_task->>'limit_key';
        v_count_key := (v_task->>'org_id') || '/' || v_model;
        v_slot_key := (v_task->>'org_id') || '/' || v_limit_key;

        -- The rolling daily count, read once per (organization, model) of the batch.
        IF NOT v_used ? v_count_key THEN
            SELECT coalesce(sum(d.count), 0), min(d.bucket) INTO v_sum, v_min
            FROM daily_generations d
            WHERE d.org_id = v_org AND d.model = v_model
              AND d.bucket > now() - k_window AND d.count > 0;
            IF v_sum + (v_in_batch->>v_count_key)::bigint + k_margin
                    >= (v_task->>'max_daily')::bigint THEN
                PERFORM pg_advisory_xact_lock(hashtext(v_org::text), hashtext(v_model));
                SELECT coalesce(sum(d.count), 0), min(d.bucket) INTO v_sum, v_min
                FROM daily_generations d
                WHERE d.org_id = v_org AND d.model = v_model
                  AND d.bucket > now() - k_window AND d.count > 0;
            END IF;
            v_used := v_used || jsonb_build_object(v_count_key, v_sum);
            v_oldest := v_oldest || jsonb_build_object(v_count_key,
                extract(epoch FROM coalesce(v_min, v_bucket)));
            v_added := v_added || jsonb_build_object(v_count_key, 0);
        END IF;

        IF (v_used->>v_count_key)::bigint + 1 > (v_task->>'max_daily')::bigint THEN
            v_statuses[i] := 'rate_limited';
            v_retry[i] := greatest(1, ceil(extract(epoch FROM
                to_timestamp((v_oldest->>v_count_key)::double precision) + k_window - now())))::integer;
            CONTINUE;
        END IF;
        v_used := v_used || jsonb_build_object(v_count_key, (v_used->>v_count_key)::bigint + 1);
        v_added := v_added || jsonb_build_object(v_count_key, (v_added->>v_count_key)::bigint + 1);

        -- Concurrency: is anyone of this group already waiting? (Ordered like tasks_throttled;
        -- see migration 0002.)
        IF NOT v_waiting ? v_slot_key THEN
            PERFORM 1 FROM tasks t
            WHERE t.status = 'THROTTLED' AND t.org_id = v_org AND t.limit_key = v_limit_key
            ORDER BY t.org_id, t.limit_key, t.created_at LIMIT 1;
            v_waiting := v_waiting || jsonb_build_object(v_slot_key, FOUND);
        END IF;
        v_status := 'THROTTLED';
        IF NOT (v_waiting->>v_slot_key)::boolean THEN
            UPDATE concurrency_slots s SET active = s.active + 1
            WHERE s.org_id = v_org AND s.limit_key = v_limit_key
              AND s.active < (v_task->>'max_concurrent')::integer;
            IF FOUND THEN
                v_status := 'PENDING';
            ELSIF (v_task->>'max_concurrent')::integer > 0 AND NOT EXISTS (
                    SELECT 1 FROM concurrency_slots s
                    WHERE s.org_id = v_org AND s.limit_key = v_limit_key) THEN
                INSERT INTO concurrency_slots (org_id, limit_key, active)
                VALUES (v_org, v_limit_key, 0)
                ON CONFLICT (org_id, limit_key) DO NOTHING;
                UPDATE concurrency_slots s SET active = s.active + 1
                WHERE s.org_id = v_org AND s.limit_key = v_limit_key
                  AND s.active < (v_task->>'max_concurrent')::integer;
                IF FOUND THEN
                    v_status := 'PENDING';
                END IF;
            END IF;
            IF v_status = 'THROTTLED' THEN
                v_waiting := v_waiting || jsonb_build_object(v_slot_key, true);
            END IF;
        END IF;
        v_statuses[i] := v_status;
        v_any_pending := v_any_pending OR v_status = 'PENDING';
    END LOOP;

    -- One increment per (organization, model) of the batch.
    INSERT INTO daily_generations AS d (org_id, model, bucket, shard, count)
    SELECT split_part(a.key, '/', 1)::uuid, substr(a.key, 38), v_bucket, v_shard, a.value::bigint
    FROM jsonb_each_text(v_added) a WHERE a.value::bigint > 0
    ON CONFLICT (org_id, model, bucket, shard) DO UPDATE SET count = d.count + excluded.count;

    IF v_any_pending THEN
        PERFORM pg_notify('genhost_tasks', '');
    END IF;

    RETURN QUERY
    WITH stored AS (
        INSERT INTO tasks AS t (id, org_id, endpoint, model, limit_key, status, input,
                                estimated_credits)
        SELECT (x.e->>'id')::uuid, (x.e->>'org_id')::uuid, x.e->>'endpoint', x.e->>'model',
               x.e->>'limit_key', v_statuses[x.i], x.e->'input', (x.e->>'credits')::double precision
        FROM jsonb_array_elements(p_tasks) WITH ORDINALITY AS x(e, i)
        WHERE v_statuses[x.i] <> 'rate_limited'
        ORDER BY x.i
        RETURNING t.id AS stored_id, t.created_at AS stored_at)
    SELECT v_statuses[x.i], v_retry[x.i], s.stored_at
    FROM jsonb_array_elements(p_tasks) WITH ORDINALITY AS x(e, i)
    LEFT JOIN stored s ON s.stored_id = (x.e->>'id')::uuid
    ORDER BY x.i;
END
$$;

-- The slot recount of genhost_promote_throttled counts a group's PENDING and RUNNING tasks; without
-- an index that was a scan of the whole table every sweep (40-80 ms with 260k tasks, measured).
CREATE INDEX tasks_active ON tasks (org_id, limit_key) WHERE status IN ('PENDING', 'RUNNING');
