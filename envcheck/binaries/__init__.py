"""What the node's own ELF files say: the GPU kernels each library carries (fatbin headers),
the libraries each needs and the copy the loader picks, the symbol versions they need, the torch
symbols an extension expects. Read like a probe reads /proc (only headers, never whole files);
the results reach the rules through the report's ``binaries`` section."""
