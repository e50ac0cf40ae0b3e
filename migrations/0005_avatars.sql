-- Custom avatars (POST /v1/avatars, docs/avatars.md).
--
-- An avatar is stored PROCESSING by its create or update request. Its reference image was read
-- and probed by that request and copied into the output store (`avatar-<id>/<source_name>`), or,
-- when URLs are fetched by workers (GENHOST_FETCH_OFFLINE), `source_uri` keeps the URL to fetch.
-- Any node's avatar processor claims a PROCESSING avatar with a lease (`lease_owner`,
-- `lease_expires_at`; an expired lease is claimed again, so an avatar whose node died is
-- finished by another), makes the portrait and the two previews, and ends it READY (with
-- `portrait`, the processed picture avatar videos are made from) or FAILED (`failure_reason`).
-- `revision` grows with every update, so a processor never completes a version that was
-- replaced meanwhile.

CREATE TABLE avatars (
    id uuid PRIMARY KEY,
    org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name text NOT NULL,
    personality text NOT NULL,
    start_script text,
    voice jsonb NOT NULL,                   -- the request form: {type, presetId} or {type, id}
    document_ids uuid[] NOT NULL DEFAULT '{}',
    image_processing text NOT NULL CHECK (image_processing IN ('optimize', 'none')),
    status text NOT NULL CHECK (status IN ('PROCESSING', 'READY', 'FAILED')),
    failure_reason text,
    source_name text,                       -- the stored reference image (output store object)
    source_uri text,                        -- a URL still to fetch, else NULL (source is stored)
    portrait bytea,                         -- READY: the processed picture (JPEG)
    has_previews boolean NOT NULL DEFAULT false,
    revision integer NOT NULL DEFAULT 1,
    lease_owner text,
    lease_expires_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    CHECK ((status = 'FAILED') = (failure_reason IS NOT NULL))
);
-- GET /v1/avatars: an organization's avatars, newest first, by keyset pagination.
CREATE INDEX avatars_org_created ON avatars (org_id, created_at DESC, id DESC);
-- The processors' claim.
CREATE INDEX avatars_processing ON avatars (updated_at) WHERE status = 'PROCESSING';
