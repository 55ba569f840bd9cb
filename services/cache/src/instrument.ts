// Loaded with `node --import` before main, so tracing (when Otlp__Endpoint is set) sees every module.
import { startTracing } from '@sp/observability/tracing';

startTracing('cache');
