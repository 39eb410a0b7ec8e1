"""Who plays a seat: the built-in baselines (`baselines`), the one resolver from a name and
the rules (`resolve`), the numpy model format and the shipped levels (`models`, `levels/`),
ONNX and SB3 model files (`sources`) and checks on SB3 zips (`checkpoints`)."""
