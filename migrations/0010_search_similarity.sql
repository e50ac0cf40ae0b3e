-- Document search's misspelling fallback (genhost_search_documents, migration 0008) compares
-- query words with the organization's words by trigram similarity. At pg_trgm's default
-- threshold (0.3), a word with two letters swapped is often not similar enough: "refnud" is
-- 0.27 from "refund", "recieve" 0.33 from "receive". At 0.2 both are found; the fallback runs
-- only when nothing else matched, and keeps the 3 closest words per query word.
ALTER FUNCTION genhost_search_documents(uuid, uuid[], text, integer)
    SET pg_trgm.similarity_threshold = 0.2;
