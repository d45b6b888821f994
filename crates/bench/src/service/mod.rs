//! Latency-bounded throughput: an in-memory table with a hash index, closed-loop and
//! open-loop (rate-limited) client drivers, and latency histograms.
