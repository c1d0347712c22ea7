export { mapSpan, type MappedSpan } from './conventions';
export { placeInTrees } from './trees';
export { readResourceSpans, SpanRejected, type Attributes, type ResourceGroup } from './otlp';
export { decodeProtobufRequest, exportResponse, statusBody, statusMessage } from './proto';
