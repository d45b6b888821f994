//! Probes: what a machine is. Pure parsers (text in, typed value out) and thin readers over a [`SysRoot`].
