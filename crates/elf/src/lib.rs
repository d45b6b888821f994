//! ELF inspection and target descriptors.
