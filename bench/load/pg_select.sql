-- pgbench ceiling: one primary-key select (the shape of GET /v1/tasks/{id}).
\set n random(1, 100000)
SELECT id, payload FROM bench_rows WHERE seq = :n;
