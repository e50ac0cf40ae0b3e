-- The credit ledger (docs/credits.md).
--
-- Every change of an organization's credits is a row of `credit_entries`: a grant (an operator's
-- `genhost credits grant`, or the opening balance of a new organization), a charge (a task's or a
-- realtime session's reservation, booked when it is stored) or a refund (what the final charge
-- leaves of the reservation, booked when it ends). Two tables are kept in step with the entries
-- inside the same transactions: `credit_accounts.balance` (grants - charges + refunds; the CHECK
-- makes overselling impossible whatever the callers do) and `credit_usage` (charges and refunds
-- per organization, UTC day and usage model: POST /v1/organization/usage and the 30-day spend
-- cap read it).
--
-- Reservations are taken under the account's row lock (`SELECT ... FOR UPDATE`), accounts in id
-- order, so concurrent creations on any number of nodes are serialised per organization and a
-- request the balance cannot cover is refused before anything of it is stored.

CREATE TABLE credit_accounts (
    org_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    balance bigint NOT NULL CHECK (balance >= 0),
    -- the entries' totals, kept in step with them: balance = granted - charged + refunded
    granted bigint NOT NULL DEFAULT 0,
    charged bigint NOT NULL DEFAULT 0,
    refunded bigint NOT NULL DEFAULT 0,
    -- false: the organization is not charged at all (no entries); for operators' own
    -- organizations and for the ledger benchmark's baseline (bench/credits).
    metered boolean NOT NULL DEFAULT true
);

-- The journal: appended to, never updated, read in bulk (audits, the tests' invariants), so it
-- has no index nor foreign key to check on the request path (organizations are never deleted;
-- an entry outlives its task); the accounts hold its running totals.
CREATE TABLE credit_entries (
    org_id uuid NOT NULL,
    at timestamptz NOT NULL DEFAULT now(),
    kind text NOT NULL CHECK (kind IN ('grant', 'charge', 'refund')),
    -- grants may be negative (an operator taking credits back); charges and refunds are positive
    amount bigint NOT NULL CHECK (amount <> 0 AND (kind = 'grant' OR amount > 0)),
    model text,     -- charge, refund: the usage model (a model id, a recipe, an avatar-video kind)
    subject text,   -- charge, refund: 'task:<id>' or 'realtime_session:<id>'
    note text       -- grant: why
);

CREATE TABLE credit_usage (
    org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    day date NOT NULL,
    model text NOT NULL,
    charged bigint NOT NULL DEFAULT 0,
    refunded bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (org_id, day, model)
);

-- What a task reserved, under which usage model, and what it finally cost (set when it ends).
ALTER TABLE tasks ADD COLUMN reserved_credits bigint NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN billing_model text;
ALTER TABLE tasks ADD COLUMN cost_credits bigint;

ALTER TABLE realtime_sessions ADD COLUMN reserved_credits bigint NOT NULL DEFAULT 0;
ALTER TABLE realtime_sessions ADD COLUMN credits_per_minute bigint NOT NULL DEFAULT 0;
ALTER TABLE realtime_sessions ADD COLUMN cost_credits bigint;

-- Organizations that existed before the ledger keep working: each gets an account holding the
-- default opening balance of `GENHOST_DEFAULT_CREDITS` (docs/configuration.md), as a grant.
INSERT INTO credit_accounts (org_id, balance, granted) SELECT id, 10000000, 10000000 FROM organizations;
INSERT INTO credit_entries (org_id, kind, amount, note)
SELECT id, 'grant', 10000000, 'opening balance (migration 0014)' FROM organizations;

-- genhost_utc_day is the UTC date of `t`: usage days are UTC whatever the session's time zone.
CREATE FUNCTION genhost_utc_day(t timestamptz) RETURNS date
LANGUAGE sql IMMUTABLE AS $$ SELECT (t AT TIME ZONE 'UTC')::date $$;

-- genhost_credit_open gives organization p_org an account with p_amount credits (a grant) unless
-- it has one; true when it was opened.
CREATE FUNCTION genhost_credit_open(p_org uuid, p_amount bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO credit_accounts (org_id, balance, granted)
    VALUES (p_org, greatest(p_amount, 0), greatest(p_amount, 0))
    ON CONFLICT (org_id) DO NOTHING;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF p_amount > 0 THEN
        INSERT INTO credit_entries (org_id, kind, amount, note)
        VALUES (p_org, 'grant', p_amount, 'opening balance');
    END IF;
    RETURN true;
END
$$;

-- genhost_credit_grant adds p_amount (negative: takes back) to p_org's balance as a grant entry;
-- returns the new balance. A take-back larger than the balance raises (the CHECK).
CREATE FUNCTION genhost_credit_grant(p_org uuid, p_amount bigint, p_note text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_balance bigint;
BEGIN
    PERFORM genhost_credit_open(p_org, 0);
    UPDATE credit_accounts SET balance = balance + p_amount, granted = granted + p_amount
    WHERE org_id = p_org
    RETURNING balance INTO v_balance;
    INSERT INTO credit_entries (org_id, kind, amount, note) VALUES (p_org, 'grant', p_amount, p_note);
    RETURN v_balance;
END
$$;

-- genhost_credit_spent is p_org's net spend (charges - refunds) over the 30 UTC days ending today.
CREATE FUNCTION genhost_credit_spent(p_org uuid) RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT coalesce(sum(u.charged - u.refunded), 0)::bigint FROM credit_usage u
    WHERE u.org_id = p_org AND u.day > genhost_utc_day(now()) - 30
$$;

-- genhost_credit_book books one charge (p_amount > 0) or refund (p_amount < 0) of p_org under
-- p_model for p_subject: the entry, the balance and the day's usage. The caller holds the
-- account's lock (a charge) or does not need it (a refund only raises the balance).
CREATE FUNCTION genhost_credit_book(p_org uuid, p_model text, p_subject text, p_amount bigint)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF p_amount = 0 THEN
        RETURN;
    END IF;
    INSERT INTO credit_entries (org_id, kind, amount, model, subject)
    VALUES (p_org, CASE WHEN p_amount > 0 THEN 'charge' ELSE 'refund' END, abs(p_amount), p_model,
            p_subject);
    UPDATE credit_accounts SET balance = balance - p_amount,
                               charged = charged + greatest(p_amount, 0),
                               refunded = refunded + greatest(-p_amount, 0)
    WHERE org_id = p_org;
    INSERT INTO credit_usage AS u (org_id, day, model, charged, refunded)
    VALUES (p_org, genhost_utc_day(now()), p_model, greatest(p_amount, 0), greatest(-p_amount, 0))
    ON CONFLICT (org_id, day, model) DO UPDATE
    SET charged = u.charged + excluded.charged, refunded = u.refunded + excluded.refunded;
END
$$;

-- genhost_credit_reserve takes p_amount credits of p_org for p_subject (a realtime session, or
-- anything that is not a task): 'ok', 'insufficient_credits' or 'spend_limited' (p_max_spend:
-- the 30-day cap in credits, negative for none). Nothing is booked unless 'ok'.
CREATE FUNCTION genhost_credit_reserve(p_org uuid, p_model text, p_subject text, p_amount bigint,
                                       p_max_spend bigint)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_balance bigint;
    v_metered boolean;
BEGIN
    IF p_amount <= 0 THEN
        RETURN 'ok';
    END IF;
    SELECT balance, metered INTO v_balance, v_metered FROM credit_accounts
    WHERE org_id = p_org FOR UPDATE;
    IF FOUND AND NOT v_metered THEN
        RETURN 'ok';
    END IF;
    IF NOT FOUND OR v_balance < p_amount THEN
        RETURN 'insufficient_credits';
    END IF;
    IF p_max_spend >= 0 AND genhost_credit_spent(p_org) + p_amount > p_max_spend THEN
        RETURN 'spend_limited';
    END IF;
    PERFORM genhost_credit_book(p_org, p_model, p_subject, p_amount);
    RETURN 'ok';
END
$$;

-- Task creation with the ledger. Migration 0004's loop and 0006's fast path now also store each
-- task's reservation and usage model (the JSON's `reserve`, `billing_model`); the new
-- genhost_create_tasks wraps them:
--   1. for every metered organization of the batch (accounts locked in id order), the tasks are
--      decided in the batch's order against the balance and the 30-day cap: one comparison of
--      the batch's total when it fits, else task by task. Refused tasks ('insufficient_credits',
--      'spend_limited') are left out of the batch; a task the daily limit then refuses had its
--      credits counted in this decision, so a later task of the same batch may be refused for
--      credits it would have had (never the other way round: nothing is ever oversold).
--   2. the rest goes to the earlier function (unchanged rules: daily limit, concurrency).
--   3. the stored tasks' reservations are booked: one entry each, one balance update and one
--      usage upsert per (organization, model).
-- The result rows keep the batch's order and shape.

ALTER FUNCTION genhost_create_tasks(jsonb) RENAME TO genhost_create_tasks_unbilled;

CREATE OR REPLACE FUNCTION genhost_create_tasks_loop(p_tasks jsonb)
RETURNS TABLE (result text, retry_after integer, created_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    k_margin constant integer := 256 * 64;
    k_window constant interval := interval '24 hours 15 minutes';
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
    v_used jsonb := '{}';
    v_oldest jsonb := '{}';
    v_added jsonb := '{}';
    v_waiting jsonb := '{}';
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
                                estimated_credits, reserved_credits, billing_model)
        SELECT (x.e->>'id')::uuid, (x.e->>'org_id')::uuid, x.e->>'endpoint', x.e->>'model',
               x.e->>'limit_key', v_statuses[x.i], x.e->'input', (x.e->>'credits')::double precision,
               coalesce((x.e->>'reserve')::bigint, 0), x.e->>'billing_model'
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

CREATE OR REPLACE FUNCTION genhost_create_tasks_unbilled(p_tasks jsonb)
RETURNS TABLE (result text, retry_after integer, created_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
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
                                                input, estimated_credits, reserved_credits,
                                                billing_model)
                        SELECT (x.e->>'id')::uuid, v_org, x.e->>'endpoint', v_model, v_limit_key,
                               'THROTTLED', x.e->'input', (x.e->>'credits')::double precision,
                               coalesce((x.e->>'reserve')::bigint, 0), x.e->>'billing_model'
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

CREATE FUNCTION genhost_create_tasks(p_tasks jsonb)
RETURNS TABLE (result text, retry_after integer, created_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    v_n integer := jsonb_array_length(p_tasks);
    v_refused text[] := array_fill(NULL::text, ARRAY[v_n]);
    v_any_refused boolean := false;
    v_unmetered uuid[] := '{}';
    v_org record;
    v_task record;
    v_balance bigint;
    v_spent bigint;
    v_accepted jsonb;
    v_results text[];
    v_retries integer[];
    v_times timestamptz[];
BEGIN
    -- 1. Decide every metered organization's tasks against its balance and 30-day cap.
    FOR v_org IN
        SELECT e.org_id, sum(e.reserve) AS total, max(e.max_spend) AS max_spend
        FROM jsonb_to_recordset(p_tasks) AS e(org_id uuid, reserve bigint, max_spend bigint)
        WHERE coalesce(e.reserve, 0) > 0
        GROUP BY 1 ORDER BY 1
    LOOP
        SELECT a.balance INTO v_balance FROM credit_accounts a
        WHERE a.org_id = v_org.org_id AND a.metered FOR UPDATE;
        IF NOT FOUND THEN
            IF EXISTS (SELECT 1 FROM credit_accounts a WHERE a.org_id = v_org.org_id) THEN
                v_unmetered := v_unmetered || v_org.org_id;
                CONTINUE;
            END IF;
            v_balance := 0;
        END IF;
        -- genhost_credit_spent written out: a SQL function called from PL/pgSQL is parsed anew
        -- on every call (migration 0004).
        v_spent := 0;
        IF v_org.max_spend >= 0 THEN
            SELECT coalesce(sum(u.charged - u.refunded), 0) INTO v_spent FROM credit_usage u
            WHERE u.org_id = v_org.org_id AND u.day > (now() AT TIME ZONE 'UTC')::date - 30;
        END IF;
        IF v_balance >= v_org.total
           AND (v_org.max_spend < 0 OR v_spent + v_org.total <= v_org.max_spend) THEN
            CONTINUE;  -- the whole batch fits
        END IF;
        FOR v_task IN
            SELECT x.i, (x.e->>'reserve')::bigint AS reserve, (x.e->>'max_spend')::bigint AS cap
            FROM jsonb_array_elements(p_tasks) WITH ORDINALITY AS x(e, i)
            WHERE (x.e->>'org_id')::uuid = v_org.org_id
              AND coalesce((x.e->>'reserve')::bigint, 0) > 0
            ORDER BY x.i
        LOOP
            IF v_balance < v_task.reserve THEN
                v_refused[v_task.i] := 'insufficient_credits';
                v_any_refused := true;
            ELSIF v_task.cap >= 0 AND v_spent + v_task.reserve > v_task.cap THEN
                v_refused[v_task.i] := 'spend_limited';
                v_any_refused := true;
            ELSE
                v_balance := v_balance - v_task.reserve;
                v_spent := v_spent + v_task.reserve;
            END IF;
        END LOOP;
    END LOOP;

    -- 2. The daily limit and concurrency, for what the ledger accepted.
    IF v_any_refused THEN
        SELECT coalesce(jsonb_agg(x.e ORDER BY x.i), '[]'::jsonb) INTO v_accepted
        FROM jsonb_array_elements(p_tasks) WITH ORDINALITY AS x(e, i)
        WHERE v_refused[x.i] IS NULL;
    ELSE
        v_accepted := p_tasks;
    END IF;
    IF jsonb_array_length(v_accepted) > 0 THEN
        SELECT array_agg(r.result ORDER BY r.n), array_agg(r.retry_after ORDER BY r.n),
               array_agg(r.created_at ORDER BY r.n)
        INTO v_results, v_retries, v_times
        FROM genhost_create_tasks_unbilled(v_accepted) WITH ORDINALITY AS r(result, retry_after,
                                                                            created_at, n);
    END IF;

    -- 3. Book the stored tasks' reservations.
    -- (jsonb_to_recordset reads only these keys of each task, not its input.)
    WITH stored AS (
        SELECT a.org_id, coalesce(a.billing_model, a.model) AS model, 'task:' || a.id AS subject,
               a.reserve AS amount
        FROM ROWS FROM (jsonb_to_recordset(v_accepted)
                        AS (id text, org_id uuid, model text, billing_model text, reserve bigint))
             WITH ORDINALITY AS a(id, org_id, model, billing_model, reserve, n)
        WHERE v_results[a.n] <> 'rate_limited' AND coalesce(a.reserve, 0) > 0
          AND NOT a.org_id = ANY (v_unmetered)),
    entries AS (
        INSERT INTO credit_entries (org_id, kind, amount, model, subject)
        SELECT s.org_id, 'charge', s.amount, s.model, s.subject FROM stored s),
    balances AS (
        UPDATE credit_accounts a SET balance = a.balance - b.total, charged = a.charged + b.total
        FROM (SELECT s.org_id, sum(s.amount) AS total FROM stored s GROUP BY 1) b
        WHERE a.org_id = b.org_id)
    INSERT INTO credit_usage AS u (org_id, day, model, charged)
    SELECT s.org_id, genhost_utc_day(now()), s.model, sum(s.amount) FROM stored s GROUP BY 1, 2, 3
    ON CONFLICT (org_id, day, model) DO UPDATE SET charged = u.charged + excluded.charged;

    -- The rows in the batch's order.
    IF NOT v_any_refused THEN
        RETURN QUERY SELECT v_results[i], v_retries[i], v_times[i]
                     FROM generate_series(1, v_n) AS g(i);
        RETURN;
    END IF;
    RETURN QUERY
    SELECT coalesce(v_refused[x.i], v_results[a.n]),
           CASE WHEN v_refused[x.i] IS NULL THEN v_retries[a.n] ELSE 0 END,
           CASE WHEN v_refused[x.i] IS NULL THEN v_times[a.n] END
    FROM jsonb_array_elements(p_tasks) WITH ORDINALITY AS x(e, i)
    LEFT JOIN (SELECT a.e->>'id' AS id, a.n
               FROM jsonb_array_elements(v_accepted) WITH ORDINALITY AS a(e, n)) a
           ON a.id = x.e->>'id' AND v_refused[x.i] IS NULL
    ORDER BY x.i;
END
$$;

-- genhost_task_settle (BEFORE UPDATE OF status on tasks): when a task ends, its final cost is
-- fixed and the rest of its reservation refunded. SUCCEEDED: the cost the worker recorded
-- (cost_credits, e.g. a `duration: auto` video billed at the length made), at most the
-- reservation; FAILED by moderation (SAFETY.*, INPUT_PREPROCESSING.SAFETY.*): the whole
-- reservation, as the service charges moderated generations; any other failure and CANCELLED
-- (before or while running): nothing. Unmetered organizations' tasks reserved nothing.
CREATE FUNCTION genhost_task_settle() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    v_cost bigint;
BEGIN
    IF NEW.status = 'SUCCEEDED' THEN
        v_cost := least(coalesce(NEW.cost_credits, NEW.reserved_credits), NEW.reserved_credits);
    ELSIF NEW.status = 'FAILED' AND (NEW.failure_code LIKE 'SAFETY.%'
                                     OR NEW.failure_code LIKE 'INPUT_PREPROCESSING.SAFETY.%') THEN
        v_cost := NEW.reserved_credits;
    ELSE
        v_cost := 0;
    END IF;
    NEW.cost_credits := v_cost;
    IF NEW.reserved_credits > v_cost AND EXISTS (
            SELECT 1 FROM credit_accounts a WHERE a.org_id = NEW.org_id AND a.metered) THEN
        PERFORM genhost_credit_book(NEW.org_id, coalesce(NEW.billing_model, NEW.model),
                                    'task:' || NEW.id, v_cost - NEW.reserved_credits);
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER tasks_settle BEFORE UPDATE OF status ON tasks
    FOR EACH ROW
    WHEN (OLD.status IN ('PENDING', 'THROTTLED', 'RUNNING')
          AND NEW.status IN ('SUCCEEDED', 'FAILED', 'CANCELLED'))
    EXECUTE FUNCTION genhost_task_settle();

-- genhost_finish_task with the task's final cost (NULL: the reservation).
CREATE FUNCTION genhost_finish_task(p_id uuid, p_owner text, p_status text, p_outputs jsonb,
                                    p_failure text, p_failure_code text, p_cost bigint)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_org uuid;
    v_key text;
BEGIN
    UPDATE tasks SET status = p_status, outputs = p_outputs, failure = p_failure,
                     failure_code = p_failure_code, finished_at = now(), progress = NULL,
                     lease_owner = NULL, lease_expires_at = NULL, cost_credits = p_cost
    WHERE id = p_id AND status = 'RUNNING' AND lease_owner = p_owner
    RETURNING org_id, limit_key INTO v_org, v_key;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM genhost_release_slot(v_org, v_key);
    RETURN true;
END
$$;

-- Realtime sessions are billed by the minute: the reservation covers maxDuration at the
-- catalog's credits per minute; when the session ends, the time it ran is charged at that rate
-- (to the second, rounded up to a whole credit) and the rest refunded. A session that never ran
-- (nobody joined, cancelled before, failed before) costs nothing.
CREATE FUNCTION genhost_realtime_settle() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    v_cost bigint;
BEGIN
    v_cost := least(NEW.reserved_credits,
                    ceil(coalesce(NEW.duration, 0) * NEW.credits_per_minute / 60.0)::bigint);
    IF NEW.started_at IS NULL THEN
        v_cost := 0;
    END IF;
    NEW.cost_credits := v_cost;
    IF NEW.reserved_credits > v_cost AND EXISTS (
            SELECT 1 FROM credit_accounts a WHERE a.org_id = NEW.org_id AND a.metered) THEN
        PERFORM genhost_credit_book(NEW.org_id, NEW.model, 'realtime_session:' || NEW.id,
                                    v_cost - NEW.reserved_credits);
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER realtime_sessions_settle BEFORE UPDATE OF status ON realtime_sessions
    FOR EACH ROW
    WHEN (OLD.status IN ('NOT_READY', 'READY', 'RUNNING')
          AND NEW.status IN ('COMPLETED', 'FAILED', 'CANCELLED'))
    EXECUTE FUNCTION genhost_realtime_settle();
