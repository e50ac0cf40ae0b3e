-- pgbench ceiling: one single-row insert with a uuid key (the shape of a task insert).
INSERT INTO bench_rows (id, org_id, payload) VALUES (gen_random_uuid(), '00000000-0000-4000-8000-000000000001', '{"model":"gen4_image"}');
