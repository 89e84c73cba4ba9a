import { VERSION } from '../version.js';

/** `tooltrace --help`. */
export const USAGE = `tooltrace ${VERSION}: streaming tools on an event bus, traced with OpenTelemetry

Usage:
  tooltrace demo [options]       run the demo agent live and draw its trace
  tooltrace view FILE [options]  draw the waterfall of an OTLP JSON file or an
                                 NDJSON event journal (tooltrace's or Nexus's)
  tooltrace sidecar [options]    receive events (stdin, files, HTTP) and export OTLP
  tooltrace --help               show this help
  tooltrace --version            print the version

tooltrace COMMAND --help shows a command's options.
`;

/** `tooltrace demo --help`. */
export const DEMO_USAGE = `Usage: tooltrace demo [options]

Runs a scripted agent whose tools stream, fail, get cancelled, call each other and run in a
sub-agent; shows them live, then draws the trace as it was exported over OTLP.

Options:
  --fast                     run the scenario about fifty times faster
  --no-color                 plain log lines, no colours or redrawing
  --out FILE                 write what was exported as OTLP JSON lines (default:
                             $TOOLTRACE_OUT)
  --forward URL              also send the events to a sidecar (its --listen address;
                             its token from TOOLTRACE_TOKEN)
  -h, --help                 show this help

With OTEL_EXPORTER_OTLP_ENDPOINT set, the spans are exported there too, unless
OTEL_TRACES_EXPORTER leaves otlp out; OTEL_TRACES_EXPORTER=console prints each span after the
drawing; OTEL_SDK_DISABLED=true exports nowhere but the drawing. The waterfall fits the
terminal (else COLUMNS, else 80 columns).
`;

/** `tooltrace view --help`. */
export const VIEW_USAGE = `Usage: tooltrace view FILE [options]

Draws the waterfall of FILE: an OTLP JSON file (one request, or one per line as the Collector's
file exporter writes) or an NDJSON event journal (tooltrace's or a Nexus journal).

Options:
  --trace ID                 only the trace with this id
  --session ID               only the traces of this session
  --tool NAME                only the traces with a call of this tool
  --errors                   only the traces with a failed call
  --slowest N                only the traces of the N slowest calls (1 to 1000)
  --all                      draw every trace, even more than a screen of them
  --html FILE                write one self-contained HTML page of the traces (waterfall,
                             each span's attributes and events on click, the summary)
  --trace-by MODE            how a journal's calls are grouped into traces, as the sidecar's
                             --trace-by: causal-root (a trace per turn, default), session (one
                             trace per session under a root span) or call
  --no-color                 no colours
  -h, --help                 show this help

More traces than the screen has rows (LINES, else 24, off a terminal) get a summary instead:
traces, calls, errors, cancelled, p50/p95 per tool, the slowest and the failed calls with their
trace ids; --all draws them after it. The file is read as a stream, with a progress line on a
terminal after a second. A trace of more than 5,000 spans is drawn in part, and past 20,000
spans the waterfall holds no more traces (5,000 on an HTML page); what is left out is named on
stderr.
`;
