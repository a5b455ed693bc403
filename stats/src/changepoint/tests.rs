//! Tests of `detect` on the behaviours users asked for.
