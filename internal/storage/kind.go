package storage

// Kinds of storage tsbench tells apart (in verify and observe) and knows how to start
// (package local).
const (
	// KindInfluxDB is InfluxDB 1.x: Prometheus remote write and remote read, no query API.
	// tsbench starts it for the tests of that case, never as a default storage.
	KindInfluxDB = "influxdb"
)
