package remotewrite

// haWorkload is a Workload that writes each target once per replica of an HA pair:
// *workload.Part.
type haWorkload interface {
	HAReplicas() int
	HAReplicaOf(target int) int
}

// haReplicas is how many HA replicas write each target: 1 without HA pairs.
func haReplicas(wl Workload) int {
	if h, ok := wl.(haWorkload); ok {
		return max(1, h.HAReplicas())
	}
	return 1
}

// appenderIndex is the appender of target in its shard: one per HA replica, so that a
// request carries one replica's samples only, as a Prometheus replica's remote write does
// (the Cortex/Mimir HA tracker decides per request by the labels of its first series).
func appenderIndex(wl Workload, target, shard, ha int) int {
	if ha == 1 {
		return shard
	}
	return shard*ha + wl.(haWorkload).HAReplicaOf(target)
}
