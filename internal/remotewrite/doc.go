// Package remotewrite writes the workload to every storage, each in the protocol it takes:
// Prometheus remote write 1.0 and 2.0 (protobuf, snappy block compression) and OTLP/HTTP
// metrics (protobuf, gzip or uncompressed). The workload is generated once (once per
// storage with history), each sample encoded once per protocol in use through one encoder
// interface (appender.go), each request compressed once per wire and shared by every storage
// that takes it; one independent pipeline per storage with bounded queues, retries with
// backoff, and exact accounting.
//
// Files: writer.go builds the writer and runs it; generate.go walks the scrape schedule;
// appender.go batches and fans out to the encoders (encode*.go); pipeline.go queues and
// sends; account.go reports lag and results; history.go, series.go, resume.go the catch-up,
// held samples and resumed runs.
//
// Invariant: for every storage, at every moment, generated = acked + dropped{reason} +
// pending, in whole samples; a slow or dead storage never slows the generator or another
// storage — it shows as lag, pending and counted drops.
package remotewrite
