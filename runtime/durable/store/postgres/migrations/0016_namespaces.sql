-- 0016 namespaces: the runs of one namespace (Options.Namespace), newest
-- first, on an index, however small the namespace beside the others.
--
-- A namespace's ids are prefixed with its name and the unit separator
-- (chr(31), store.NamespaceSep); the default namespace's carry no prefix, so
-- the runs written before this migration are the default namespace's and
-- nothing is rewritten. The index's first column is the namespace of the id
-- ('' for the default one), the expression the listing
-- (store.ListSQL, listDialect.Namespace) writes word for word.
CREATE INDEX _sky_durable_runs_namespace_list ON _sky_durable_runs
  ((CASE WHEN strpos(id, chr(31)) = 0 THEN '' ELSE split_part(id, chr(31), 1) END), created_at, id);
