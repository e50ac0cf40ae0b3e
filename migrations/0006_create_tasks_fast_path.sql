-- Task creation: a fast path for a flood of one group.
--
-- When one organization creates tasks of one model faster than its concurrency limit lets them
-- run, the batches that genhost_create_tasks (migration 0004) receives hold one (organization,
-- model, limit key) group whose tasks all end THROTTLED. Its loop decides that task by task;
-- the fast path below reaches the same result with one daily-count read, one check for a
-- waiting task, one increment and the insert (PostgreSQL's CPU per creation 62-63 -> 52-53 us
-- under the creation benchmark; docs/performance.md).
--
-- It is taken only when the loop could not decide otherwise:
--   * the batch holds more than one task, all of one organization, model and limit key;
--   * the window's sum is far from the daily limit after this batch (the loop's own test for
--     reading it without the advisory lock), so no task is refused;
--   * a task of the group already waits, so every task of the batch is THROTTLED (oldest first)
--     and no slot is taken; there is no task to announce.
-- Every other batch goes to migration 0004's function, kept as genhost_create_tasks_loop.

ALTER FUNCTION genhost_create_tasks(jsonb) RENAME TO genhost_create_tasks_loop;

CREATE FUNCTION genhost_create_tasks(p_tasks jsonb)
RETURNS TABLE (result text, retry_after integer, created_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    -- The constants and the bucket of genhost_create_tasks_loop (migration 0004).
    k_margin constant integer := 256 * 64;
    k_window constant interval := interval '24 hours 15 minutes';
    v_bucket timestamptz := date_trunc('hour', now())
                            + floor(extract(minute FROM now()) / 15) * interval '15 minutes';
    v_shard smallint := (pg_backend_pid() % 16)::smallint;
    v_n integer := jsonb_array_length(p_tasks);
    v_task jsonb := p_tasks -> 0;
    v_org uuid;
    v_model text;
    v_limit_key text;
    v_groups bigint;
    v_sum bigint;
BEGIN
    IF v_n > 1 THEN
        SELECT count(DISTINCT concat_ws('/', e->>'org_id', e->>'model', e->>'limit_key'))
        INTO v_groups FROM jsonb_array_elements(p_tasks) e;
        IF v_groups = 1 THEN
            v_org := (v_task->>'org_id')::uuid;
            v_model := v_task->>'model';
            v_limit_key := v_task->>'limit_key';
            SELECT coalesce(sum(d.count), 0) INTO v_sum
            FROM daily_generations d
            WHERE d.org_id = v_org AND d.model = v_model
              AND d.bucket > now() - k_window AND d.count > 0;
            IF v_sum + v_n + k_margin < (v_task->>'max_daily')::bigint THEN
                -- Ordered like tasks_throttled, as in the loop (see migration 0002).
                PERFORM 1 FROM tasks t
                WHERE t.status = 'THROTTLED' AND t.org_id = v_org AND t.limit_key = v_limit_key
                ORDER BY t.org_id, t.limit_key, t.created_at LIMIT 1;
                IF FOUND THEN
                    INSERT INTO daily_generations AS d (org_id, model, bucket, shard, count)
                    VALUES (v_org, v_model, v_bucket, v_shard, v_n)
                    ON CONFLICT (org_id, model, bucket, shard)
                    DO UPDATE SET count = d.count + excluded.count;
                    RETURN QUERY
                    WITH stored AS (
                        INSERT INTO tasks AS t (id, org_id, endpoint, model, limit_key, status,
                                                input, estimated_credits)
                        SELECT (x.e->>'id')::uuid, v_org, x.e->>'endpoint', v_model, v_limit_key,
                               'THROTTLED', x.e->'input', (x.e->>'credits')::double precision
                        FROM jsonb_array_elements(p_tasks) WITH ORDINALITY AS x(e, i)
                        ORDER BY x.i
                        RETURNING t.id AS stored_id, t.created_at AS stored_at)
                    SELECT 'THROTTLED'::text, 0, s.stored_at
                    FROM jsonb_array_elements(p_tasks) WITH ORDINALITY AS x(e, i)
                    JOIN stored s ON s.stored_id = (x.e->>'id')::uuid
                    ORDER BY x.i;
                    RETURN;
                END IF;
            END IF;
        END IF;
    END IF;
    RETURN QUERY SELECT * FROM genhost_create_tasks_loop(p_tasks);
END
$$;
