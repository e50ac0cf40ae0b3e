-- Ephemeral uploads (POST /v1/uploads, docs/uploads.md).
--
-- A row is created with the upload URI; the one multipart POST its signed policy authorises
-- claims it (`receiving_since`), streams the file to DATA_DIR/inputs/uploads/<id> and marks it
-- complete with the file's size, Content-Type and filename. A failed POST releases the claim.
-- Every node's sweeper deletes expired rows (and their files) through `uploads_expires`.

CREATE TABLE uploads (
    id uuid PRIMARY KEY,
    org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    filename text NOT NULL,                 -- as given to POST /v1/uploads
    max_bytes bigint NOT NULL CHECK (max_bytes > 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    receiving_since timestamptz,            -- a POST is streaming the file in
    completed_at timestamptz,
    size bigint CHECK (size >= 0),
    content_type text,                      -- of the multipart file part
    file_name text,                         -- filename of the multipart file part
    CHECK ((completed_at IS NULL) = (size IS NULL))
);
CREATE INDEX uploads_expires ON uploads (expires_at);
CREATE INDEX uploads_org ON uploads (org_id);
