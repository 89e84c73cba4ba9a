/**
 * `@grpc/grpc-js`, as far as `tooltrace/testing`'s gRPC receiver uses it. The build bundles this
 * file with the package's code (`dist/vendor/grpc.js`), so an installed tooltrace needs no gRPC
 * package of its own: the package has no runtime dependencies.
 */
export { Metadata, Server, ServerCredentials, status } from '@grpc/grpc-js';
export type { sendUnaryData, ServerUnaryCall, ServiceError } from '@grpc/grpc-js';
