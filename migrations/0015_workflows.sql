-- Workflows and their invocations (/v1/workflows, /v1/workflow_invocations; docs/workflows.md).
--
-- A workflow is a named graph of an organization; every publication of the same name adds a
-- version (1, 2, ...) and every version is kept. The API lists and reads versions and invokes
-- one: an invocation stores its plan (the generation nodes with their inputs, primitives already
-- substituted, and what each takes from which upstream node) and one row per generation node,
-- and queues its job of kind `workflow_invocation` in the same transaction (a trigger). The job
-- (tasks/workflow_runner.hpp) advances the invocation a step at a time: it starts every node
-- whose inputs are ready as an ordinary task, records the ends of their tasks, and ends the
-- invocation when nothing more can run.
CREATE TABLE workflows (
    id uuid PRIMARY KEY,
    org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name text NOT NULL,
    next_version integer NOT NULL DEFAULT 1,  -- the version the next publication takes
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (org_id, name)
);
CREATE INDEX workflows_org_created ON workflows (org_id, created_at DESC, id DESC);

CREATE TABLE workflow_versions (
    id uuid PRIMARY KEY,
    workflow_id uuid NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    version integer NOT NULL CHECK (version >= 1),
    description text,
    graph jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (workflow_id, version)
);

-- status: PENDING until its job first runs, RUNNING while nodes run, then SUCCEEDED, FAILED or
-- CANCELLED (docs/workflows.md, "Failure rules"). `plan` is what the job runs; `overrides` the
-- request's nodeOutputs as validated (kept for operators).
CREATE TABLE workflow_invocations (
    id uuid PRIMARY KEY,
    org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    version_id uuid NOT NULL REFERENCES workflow_versions (id) ON DELETE CASCADE,
    status text NOT NULL CHECK (status IN ('PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED',
                                           'CANCELLED')),
    plan jsonb NOT NULL,
    overrides jsonb NOT NULL DEFAULT '{}',
    progress double precision NOT NULL DEFAULT 0 CHECK (progress >= 0 AND progress <= 1),
    failure text,
    failure_code text,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at timestamptz,
    CHECK ((status = 'FAILED') = (failure IS NOT NULL))
);
CREATE INDEX workflow_invocations_version ON workflow_invocations (version_id);

-- One row per generation node of an invocation. status: WAITING (inputs not ready), STARTING
-- (its task id is recorded, the task may not exist yet: a step that died here creates it with
-- this id), RUNNING (its task exists), SUCCEEDED (outputs: the task's output names), FAILED
-- (its task failed, was cancelled or could not be created: error, error_code) or SKIPPED (an
-- upstream node failed: error).
CREATE TABLE workflow_invocation_nodes (
    invocation_id uuid NOT NULL REFERENCES workflow_invocations (id) ON DELETE CASCADE,
    node_id text NOT NULL,
    position integer NOT NULL,  -- the node's place in the graph's `nodes`
    name text NOT NULL,
    status text NOT NULL DEFAULT 'WAITING'
        CHECK (status IN ('WAITING', 'STARTING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'SKIPPED')),
    task_id uuid,
    outputs jsonb,
    error text,
    error_code text,
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (invocation_id, node_id),
    CHECK ((status = 'SUCCEEDED') = (outputs IS NOT NULL))
);

CREATE FUNCTION genhost_workflow_invocation_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM jobs WHERE kind = 'workflow_invocation' AND subject = OLD.id::text;
        RETURN OLD;
    END IF;
    PERFORM genhost_enqueue_job('workflow_invocation', NEW.id::text, 1);
    RETURN NEW;
END;
$$;
CREATE TRIGGER workflow_invocations_jobs AFTER INSERT OR DELETE ON workflow_invocations
    FOR EACH ROW EXECUTE FUNCTION genhost_workflow_invocation_jobs();
