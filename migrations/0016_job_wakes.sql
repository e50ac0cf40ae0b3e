-- Issue 32: background steps are woken by NOTIFY, not by short polls.
--
-- genhost_wake_job makes job (p_kind, p_subject) due now and wakes the nodes. A job running at
-- that moment records the wake in woken_at: when its run then asks to wait (JobRepo::DeferSync),
-- it is due at once instead, so a wake that lands mid-run is never lost.
ALTER TABLE jobs ADD COLUMN woken_at timestamptz;

CREATE FUNCTION genhost_wake_job(p_kind text, p_subject text) RETURNS void LANGUAGE sql AS $$
    UPDATE jobs SET woken_at = clock_timestamp(),
                    run_after = CASE WHEN status = 'PENDING'
                                     THEN least(run_after, clock_timestamp()) ELSE run_after END
    WHERE kind = p_kind AND subject = p_subject;
    SELECT pg_notify('genhost_jobs', p_kind);
$$;

-- A workflow invocation takes its next step as soon as one of its nodes' tasks ends (it used to
-- look every half second).
CREATE INDEX workflow_invocation_nodes_task ON workflow_invocation_nodes (task_id)
    WHERE task_id IS NOT NULL;

CREATE FUNCTION genhost_task_ended_wakes_workflow() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    v_invocation uuid;
BEGIN
    SELECT invocation_id INTO v_invocation FROM workflow_invocation_nodes
    WHERE task_id = NEW.id LIMIT 1;
    IF FOUND THEN
        PERFORM genhost_wake_job('workflow_invocation', v_invocation::text);
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER tasks_wake_workflows AFTER UPDATE OF status ON tasks FOR EACH ROW
    WHEN (NEW.status IN ('SUCCEEDED', 'FAILED', 'CANCELLED') AND OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION genhost_task_ended_wakes_workflow();

-- A realtime session cancelled through the API (DELETE) is told to the node that runs it at once
-- (channel genhost_sessions, payload: the session id); that node used to read the row every
-- 250 ms.
CREATE FUNCTION genhost_realtime_session_cancelled() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('genhost_sessions', NEW.id::text);
    RETURN NULL;
END;
$$;
CREATE TRIGGER realtime_sessions_cancelled AFTER UPDATE OF status ON realtime_sessions
    FOR EACH ROW
    WHEN (NEW.status = 'CANCELLED' AND OLD.status IN ('NOT_READY', 'READY', 'RUNNING'))
    EXECUTE FUNCTION genhost_realtime_session_cancelled();
