-- Model routers (/v1/routers, docs/routers.md): saved routing configurations.
--
-- A router's slug is unique among the organization's live routers and never changes. `version`
-- starts at 1 and grows only when the effective settings change; every version's settings are
-- kept in router_versions, so a routing decision can name the version that made it. Deleting a
-- router marks it deleted (its slug is free again and generate requests naming it get 404), and
-- keeps its versions for the decisions that refer to them.
CREATE TABLE routers (
    id uuid PRIMARY KEY,
    org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    slug text NOT NULL,
    name text NOT NULL,
    description text,
    version integer NOT NULL DEFAULT 1,
    settings jsonb NOT NULL,
    deleted_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX routers_org_slug ON routers (org_id, slug) WHERE deleted_at IS NULL;
CREATE INDEX routers_org_created ON routers (org_id, created_at, id) WHERE deleted_at IS NULL;

CREATE TABLE router_versions (
    router_id uuid NOT NULL REFERENCES routers (id) ON DELETE CASCADE,
    version integer NOT NULL,
    settings jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (router_id, version)
);

-- Every version a router reaches is kept, in the same transaction.
CREATE FUNCTION genhost_router_versions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' OR OLD.version IS DISTINCT FROM NEW.version THEN
        INSERT INTO router_versions (router_id, version, settings)
        VALUES (NEW.id, NEW.version, NEW.settings);
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER routers_versions AFTER INSERT OR UPDATE ON routers
    FOR EACH ROW EXECUTE FUNCTION genhost_router_versions();
