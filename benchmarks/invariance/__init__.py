"""What the batch-invariant engine costs, and how far bf16 sits from fp32."""
