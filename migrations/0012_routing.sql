-- Routing (docs/routers.md): the decision log of model routers and the measured latency of models.
--
-- router_requests keeps one row per routing decision (GET /v1/routers/{id}/requests, newest
-- first): the router and the version whose settings decided, the request, what was chosen (or why
-- nothing was), and the pipeline of filters that led there as JSON. The rows are written off the
-- request path, in batches (store::RouterLog, src/store/router_log.cpp), so `created_at` is the
-- time of the decision as its node saw it, not of the insert; `id` is the caller's ordered UUID
-- and makes a batch that is sent again after a lost connection harmless (ON CONFLICT DO NOTHING).
-- Rows go with their router or organization.
--
-- model_latency is an exponentially weighted moving average of how long a model's tasks run: the
-- seconds from the first claim (started_at, kept across re-queues) to the end, of every task that
-- ends SUCCEEDED. The trigger below maintains it in the finishing transaction
-- (genhost_finish_task's single UPDATE sets status and finished_at together): the first sample is
-- the average, each later one weighs a fifth. Routers read it for `best_latency`
-- (store::RoutingSnapshotRepo, cached per process for a second).
CREATE TABLE router_requests (
    id uuid PRIMARY KEY,
    org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    router_id uuid NOT NULL REFERENCES routers (id) ON DELETE CASCADE,
    router_version integer NOT NULL,
    request_id text NOT NULL,
    dry_run boolean NOT NULL,
    status text NOT NULL CHECK (status IN ('routed', 'no_eligible_model',
                                           'router_config_not_found', 'invalid_request', 'error')),
    task_id uuid,
    model text,
    provider text,
    estimated_credits double precision,
    reason_code text CHECK (reason_code IN ('lowest_cost', 'best_latency', 'best_quality',
                                            'only_eligible_model', 'filter_order_fallback')),
    reason text,
    emptied_by jsonb NOT NULL DEFAULT '[]',
    pipeline jsonb NOT NULL DEFAULT '[]',
    created_at timestamptz NOT NULL
);
-- A router's page, newest first: (created_at, id) below the cursor's.
CREATE INDEX router_requests_page ON router_requests (router_id, created_at DESC, id DESC);

-- A generate request naming a deleted router's slug logs router_config_not_found on the most
-- recently deleted router that had it.
CREATE INDEX routers_org_slug_deleted ON routers (org_id, slug, deleted_at DESC)
    WHERE deleted_at IS NOT NULL;

CREATE TABLE model_latency (
    model text PRIMARY KEY,
    ewma_seconds double precision NOT NULL,
    samples bigint NOT NULL,
    updated_at timestamptz NOT NULL
);

CREATE FUNCTION genhost_model_latency() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    v_seconds double precision :=
        greatest(extract(epoch FROM NEW.finished_at - NEW.started_at)::double precision, 0);
BEGIN
    INSERT INTO model_latency AS l (model, ewma_seconds, samples, updated_at)
    VALUES (NEW.model, v_seconds, 1, now())
    ON CONFLICT (model) DO UPDATE
        SET ewma_seconds = 0.8 * l.ewma_seconds + 0.2 * EXCLUDED.ewma_seconds,
            samples = l.samples + 1,
            updated_at = now();
    RETURN NULL;
END;
$$;
CREATE TRIGGER tasks_model_latency AFTER UPDATE OF status ON tasks
    FOR EACH ROW
    WHEN (OLD.status = 'RUNNING' AND NEW.status = 'SUCCEEDED' AND NEW.started_at IS NOT NULL
          AND NEW.finished_at IS NOT NULL)
    EXECUTE FUNCTION genhost_model_latency();

-- Nodes keep the routers generate requests name in memory (store::RouterCache); a change or a
-- deletion (an UPDATE) tells every node to forget them.
CREATE FUNCTION genhost_routers_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('genhost_routers', '');
    RETURN NULL;
END;
$$;
CREATE TRIGGER routers_changed AFTER UPDATE ON routers
    FOR EACH STATEMENT EXECUTE FUNCTION genhost_routers_changed();
