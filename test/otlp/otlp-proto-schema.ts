import protobuf from 'protobufjs';

/**
 * The parts of opentelemetry-proto (common/v1, resource/v1, trace/v1, logs/v1, metrics/v1 and the
 * collector trace, logs and metrics services) the receiver deals with, written out here for the tests: protobufjs
 * encodes hand-built requests with them, an encoder independent of both the exporter under test
 * and the receiver's one decoder (src/otlp/decode-trace-protobuf.ts and
 * decode-logs-protobuf.ts, over ProtobufReader). Field numbers match opentelemetry-proto; fields
 * the receiver does not read are left out.
 */
const OTLP_PROTO_SOURCE = `
syntax = "proto3";

package opentelemetry.proto;

message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
  }
}

message ArrayValue {
  repeated AnyValue values = 1;
}

message KeyValueList {
  repeated KeyValue values = 1;
}

message KeyValue {
  string key = 1;
  AnyValue value = 2;
}

message InstrumentationScope {
  string name = 1;
  string version = 2;
  repeated KeyValue attributes = 3;
  uint32 dropped_attributes_count = 4;
}

message Resource {
  repeated KeyValue attributes = 1;
  uint32 dropped_attributes_count = 2;
}

message Span {
  message Event {
    fixed64 time_unix_nano = 1;
    string name = 2;
    repeated KeyValue attributes = 3;
    uint32 dropped_attributes_count = 4;
  }

  message Link {
    bytes trace_id = 1;
    bytes span_id = 2;
    string trace_state = 3;
    repeated KeyValue attributes = 4;
    uint32 dropped_attributes_count = 5;
    fixed32 flags = 6;
  }

  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  string name = 5;
  int32 kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  uint32 dropped_attributes_count = 10;
  repeated Event events = 11;
  uint32 dropped_events_count = 12;
  repeated Link links = 13;
  uint32 dropped_links_count = 14;
  Status status = 15;
  fixed32 flags = 16;
}

message Status {
  string message = 2;
  int32 code = 3;
}

message ScopeSpans {
  InstrumentationScope scope = 1;
  repeated Span spans = 2;
  string schema_url = 3;
}

message ResourceSpans {
  Resource resource = 1;
  repeated ScopeSpans scope_spans = 2;
  string schema_url = 3;
}

message ExportTraceServiceRequest {
  repeated ResourceSpans resource_spans = 1;
}

message ExportTracePartialSuccess {
  int64 rejected_spans = 1;
  string error_message = 2;
}

message ExportTraceServiceResponse {
  ExportTracePartialSuccess partial_success = 1;
}

message LogRecord {
  fixed64 time_unix_nano = 1;
  int32 severity_number = 2;
  string severity_text = 3;
  AnyValue body = 5;
  repeated KeyValue attributes = 6;
  uint32 dropped_attributes_count = 7;
  fixed32 flags = 8;
  bytes trace_id = 9;
  bytes span_id = 10;
  fixed64 observed_time_unix_nano = 11;
  string event_name = 12;
}

message ScopeLogs {
  InstrumentationScope scope = 1;
  repeated LogRecord log_records = 2;
  string schema_url = 3;
}

message ResourceLogs {
  Resource resource = 1;
  repeated ScopeLogs scope_logs = 2;
  string schema_url = 3;
}

message ExportLogsServiceRequest {
  repeated ResourceLogs resource_logs = 1;
}

message ExportLogsPartialSuccess {
  int64 rejected_log_records = 1;
  string error_message = 2;
}

message ExportLogsServiceResponse {
  ExportLogsPartialSuccess partial_success = 1;
}

// google.rpc.Status, the body OTLP/HTTP servers answer failures with.
message RpcStatus {
  int32 code = 1;
  string message = 2;
}
message NumberDataPoint {
  repeated KeyValue attributes = 7;
  fixed64 start_time_unix_nano = 2;
  fixed64 time_unix_nano = 3;
  oneof value {
    double as_double = 4;
    sfixed64 as_int = 6;
  }
  uint32 flags = 8;
}

message HistogramDataPoint {
  repeated KeyValue attributes = 9;
  fixed64 start_time_unix_nano = 2;
  fixed64 time_unix_nano = 3;
  fixed64 count = 4;
  optional double sum = 5;
  repeated fixed64 bucket_counts = 6;
  repeated double explicit_bounds = 7;
  uint32 flags = 10;
  optional double min = 11;
  optional double max = 12;
}

message ExponentialHistogramDataPoint {
  message Buckets {
    sint32 offset = 1;
    repeated uint64 bucket_counts = 2;
  }
  repeated KeyValue attributes = 1;
  fixed64 start_time_unix_nano = 2;
  fixed64 time_unix_nano = 3;
  fixed64 count = 4;
  optional double sum = 5;
  sint32 scale = 6;
  fixed64 zero_count = 7;
  Buckets positive = 8;
  Buckets negative = 9;
  uint32 flags = 10;
  optional double min = 12;
  optional double max = 13;
  double zero_threshold = 14;
}

message Gauge {
  repeated NumberDataPoint data_points = 1;
}

message Sum {
  repeated NumberDataPoint data_points = 1;
  int32 aggregation_temporality = 2;
  bool is_monotonic = 3;
}

message Histogram {
  repeated HistogramDataPoint data_points = 1;
  int32 aggregation_temporality = 2;
}

message ExponentialHistogram {
  repeated ExponentialHistogramDataPoint data_points = 1;
  int32 aggregation_temporality = 2;
}

message Metric {
  string name = 1;
  string description = 2;
  string unit = 3;
  oneof data {
    Gauge gauge = 5;
    Sum sum = 7;
    Histogram histogram = 9;
    ExponentialHistogram exponential_histogram = 10;
  }
}

message ScopeMetrics {
  InstrumentationScope scope = 1;
  repeated Metric metrics = 2;
  string schema_url = 3;
}

message ResourceMetrics {
  Resource resource = 1;
  repeated ScopeMetrics scope_metrics = 2;
  string schema_url = 3;
}

message ExportMetricsServiceRequest {
  repeated ResourceMetrics resource_metrics = 1;
}
`;

/**
 * The protobufjs message types of the OTLP messages the receiver reads and writes. Enums are
 * declared as `int32` (same wire encoding) so that decoded values stay plain numbers.
 */
export interface OtlpProtoTypes {
  readonly exportTraceServiceRequest: protobuf.Type;
  readonly exportTraceServiceResponse: protobuf.Type;
  readonly exportLogsServiceRequest: protobuf.Type;
  readonly exportLogsServiceResponse: protobuf.Type;
  readonly exportMetricsServiceRequest: protobuf.Type;
  readonly rpcStatus: protobuf.Type;
}

let types: OtlpProtoTypes | undefined;

/**
 * The OTLP protobuf types, parsed from the schema above on first use and cached. Tests use them
 * to encode hand-built requests and to read the receiver's answers.
 */
export function otlpProtoTypes(): OtlpProtoTypes {
  if (types === undefined) {
    const root = protobuf.parse(OTLP_PROTO_SOURCE, { keepCase: false }).root;
    const lookup = (name: string): protobuf.Type => root.lookupType(`opentelemetry.proto.${name}`);
    types = {
      exportTraceServiceRequest: lookup('ExportTraceServiceRequest'),
      exportTraceServiceResponse: lookup('ExportTraceServiceResponse'),
      exportLogsServiceRequest: lookup('ExportLogsServiceRequest'),
      exportLogsServiceResponse: lookup('ExportLogsServiceResponse'),
      exportMetricsServiceRequest: lookup('ExportMetricsServiceRequest'),
      rpcStatus: lookup('RpcStatus'),
    };
  }
  return types;
}
