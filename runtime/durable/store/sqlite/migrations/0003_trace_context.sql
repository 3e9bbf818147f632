-- 0003 trace_context: the W3C trace context of the span that started a run
-- (Options.TracerProvider), so each attempt's span joins the starter's trace.
ALTER TABLE _sky_durable_runs ADD COLUMN trace_context TEXT;
