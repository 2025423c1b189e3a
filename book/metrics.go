package book

import "github.com/prometheus/client_golang/prometheus"

// Collectors returns Prometheus gauges and counters of b's size on disk
// and of its Pebble database (docs/cli.md, "Metrics"), read from Pebble's
// metrics when scraped: they read no entry. Unregister them, or stop
// serving them, before b is closed.
func (b *Book) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "c4book_book_disk_bytes",
			Help: "Bytes the book takes on disk: tables, write-ahead log, manifest."},
			func() float64 { disk, _ := b.DiskUsage(); return float64(disk) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "c4book_book_table_bytes",
			Help: "Bytes of the book's live tables."},
			func() float64 { _, tables := b.DiskUsage(); return float64(tables) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "c4book_book_cache_bytes",
			Help: "Bytes in the book's block cache (Pebble)."},
			func() float64 { return float64(b.DBStats().CacheBytes) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "c4book_book_cache_hits_total",
			Help: "Block cache hits of the book (Pebble)."},
			func() float64 { return float64(b.DBStats().CacheHits) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "c4book_book_cache_misses_total",
			Help: "Block cache misses of the book (Pebble)."},
			func() float64 { return float64(b.DBStats().CacheMiss) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "c4book_book_memtable_bytes",
			Help: "Bytes allocated by the book's memtables (Pebble)."},
			func() float64 { return float64(b.DBStats().MemTableBytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "c4book_book_l0_tables",
			Help: "Tables in level 0 of the book (Pebble): many mean compactions lag behind writes."},
			func() float64 { return float64(b.DBStats().L0Tables) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "c4book_book_read_amp",
			Help: "Tables a point lookup in the book may read (Pebble's read amplification)."},
			func() float64 { return float64(b.DBStats().ReadAmp) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "c4book_book_compactions_total",
			Help: "Compactions of the book since it was opened (Pebble)."},
			func() float64 { return float64(b.DBStats().Compactions) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "c4book_book_flushes_total",
			Help: "Memtable flushes of the book since it was opened (Pebble)."},
			func() float64 { return float64(b.DBStats().Flushes) }),
	}
}
