-- A team's own transaction (labs/own-workload.json): look an account up, post a payment to it and
-- log the movement. pgbench runs it against its tables at the scenario's scale; `:scale` is that
-- scale and `:client_id` the client (pgbench's automatic variables).
\set aid random(1, 100000 * :scale)
\set delta random(-5000, 5000)
BEGIN;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, :aid, :delta, CURRENT_TIMESTAMP);
END;
