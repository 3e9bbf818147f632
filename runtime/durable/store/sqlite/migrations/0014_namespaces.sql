-- 0014 namespaces: the runs of one namespace (Options.Namespace), newest
-- first, on an index, however small the namespace beside the others
-- (PostgreSQL's migration 0016 does the same).
--
-- A namespace's ids are prefixed with its name and the unit separator
-- (char(31), store.NamespaceSep); the default namespace's carry no prefix,
-- so the runs written before this migration are the default namespace's and
-- nothing is rewritten. The index holds the runs of the other namespaces
-- only (partial): a database that uses none pays nothing for it; the
-- default namespace's listing reads the listing index (created_at, id). Its
-- first column is the namespace of the id, the expression and predicate the
-- listing (store.ListSQL, listDialect) writes word for word.
CREATE INDEX _sky_durable_runs_namespace_list ON _sky_durable_runs
  (substr(id, 1, instr(id, char(31)) - 1), created_at, id) WHERE instr(id, char(31)) > 0;
