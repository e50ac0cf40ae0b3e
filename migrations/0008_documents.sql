-- Knowledge documents (/v1/documents, docs/documents.md) and their retrieval index.
--
-- A document is a name and a text of up to 200,000 characters. Avatars attach documents by id
-- (avatars.document_ids); deleting a document removes it from every avatar in the same
-- transaction. `revision` grows whenever the content changes, and each revision queues a job of
-- kind `document` (migrations/0007_jobs.sql) that cuts the content into chunks and indexes them
-- for full-text search; `indexed_revision` is the revision the chunks were cut from.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE documents (
    id uuid PRIMARY KEY,
    org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name text NOT NULL,
    type text NOT NULL DEFAULT 'text' CHECK (type IN ('text', 'file')),
    content text NOT NULL,
    revision bigint NOT NULL DEFAULT 1,
    indexed_revision bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- GET /v1/documents: keyset pages by either time, in either order.
CREATE INDEX documents_org_created ON documents (org_id, created_at, id);
CREATE INDEX documents_org_updated ON documents (org_id, updated_at, id);
-- usedBy: the avatars whose document_ids hold a document.
CREATE INDEX avatars_documents ON avatars USING gin (document_ids);

-- The chunks of the indexed revision of each document: markdown sections of about 1,500
-- characters, overlapping (src/knowledge/chunker.cpp). `tsv` weighs the section's heading path
-- (A) above its text (B).
CREATE TABLE document_chunks (
    document_id uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    ord integer NOT NULL,
    org_id uuid NOT NULL,
    heading text NOT NULL,
    body text NOT NULL,
    start_offset integer NOT NULL,
    tsv tsvector NOT NULL,
    PRIMARY KEY (document_id, ord)
);
CREATE INDEX document_chunks_tsv ON document_chunks USING gin (tsv);

-- The words an organization's documents use (lower case, as written): the last fallback of a
-- search finds the words closest to a misspelt query word here by trigram similarity, then
-- searches for those. Words are added as documents are indexed and never removed (a word no
-- chunk holds any more only finds nothing).
CREATE TABLE document_words (
    org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    word text NOT NULL,
    PRIMARY KEY (org_id, word)
);
CREATE INDEX document_words_trgm ON document_words USING gin (word gin_trgm_ops);

-- Every write that changes a document's content (a create, an update with new content) queues
-- its indexing in the same transaction; a deleted document takes its job with it.
CREATE FUNCTION genhost_document_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM jobs WHERE kind = 'document' AND subject = OLD.id::text;
        RETURN OLD;
    END IF;
    IF TG_OP = 'INSERT' OR OLD.revision IS DISTINCT FROM NEW.revision THEN
        PERFORM genhost_enqueue_job('document', NEW.id::text, NEW.revision);
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER documents_jobs AFTER INSERT OR UPDATE OR DELETE ON documents
    FOR EACH ROW EXECUTE FUNCTION genhost_document_jobs();

-- genhost_search_documents ranks the chunks of p_org's documents (those of p_ids, or all when
-- p_ids is NULL) for p_query, trying in turn:
--   websearch      websearch_to_tsquery: every word (quoted phrases, "or", -word as a web
--                  search engine reads them), ranked by ts_rank_cd;
--   any_word       some of the query's words (an OR of them);
--   similar_words  the organization's words most like each query word by trigram similarity
--                  (pg_trgm, up to 3 per word): a misspelt query still finds its passages.
-- The first strategy that finds anything answers; none finds nothing.
CREATE FUNCTION genhost_search_documents(p_org uuid, p_ids uuid[], p_query text, p_limit integer)
RETURNS TABLE (strategy text, document_id uuid, document_name text, ord integer, heading text,
               body text, start_offset integer, score double precision)
LANGUAGE plpgsql STABLE SET client_min_messages = warning AS $$
DECLARE
    v_q tsquery;
    v_words text[];
    v_step text;
BEGIN
    v_words := ARRAY(SELECT DISTINCT w FROM regexp_split_to_table(lower(p_query), '[^[:alnum:]]+') w
                     WHERE length(w) >= 2);
    FOREACH v_step IN ARRAY ARRAY['websearch', 'any_word', 'similar_words'] LOOP
        IF v_step = 'websearch' THEN
            v_q := websearch_to_tsquery('english', p_query);
        ELSIF cardinality(v_words) = 0 THEN
            RETURN;
        ELSIF v_step = 'any_word' THEN
            v_q := to_tsquery('english', (SELECT string_agg(quote_literal(w), ' | ')
                                          FROM unnest(v_words) w));
        ELSE
            v_q := to_tsquery('english', coalesce(
                (SELECT string_agg(quote_literal(n.word), ' | ')
                 FROM unnest(v_words) w,  -- (stop words look like too many words)
                      LATERAL (SELECT dw.word FROM document_words dw
                               WHERE to_tsvector('english', w) <> ''::tsvector
                                 AND dw.org_id = p_org AND dw.word % w AND dw.word <> w
                               ORDER BY similarity(dw.word, w) DESC, dw.word LIMIT 3) n), ''));
        END IF;
        IF numnode(v_q) > 0 THEN
            RETURN QUERY
            SELECT v_step, c.document_id, d.name, c.ord, c.heading, c.body, c.start_offset,
                   ts_rank_cd(c.tsv, v_q)::double precision AS rank
            FROM document_chunks c JOIN documents d ON d.id = c.document_id
            WHERE c.org_id = p_org AND (p_ids IS NULL OR c.document_id = ANY (p_ids))
              AND c.tsv @@ v_q
            ORDER BY rank DESC, c.document_id, c.ord
            LIMIT p_limit;
            IF FOUND THEN
                RETURN;
            END IF;
        END IF;
    END LOOP;
END;
$$;
