//! Statistics over benchmark samples.
