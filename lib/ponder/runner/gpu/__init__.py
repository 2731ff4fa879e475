"""Execution on a GPU alone: seeds trained as one batched model, CUDA graphs, compiled losses."""
