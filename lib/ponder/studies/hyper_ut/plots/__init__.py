"""Figures of the Hyper-UT reproduction, a module per notebook as in ``analysis/``: the task (hut-1), C-PVR
(hut-2 … hut-5, hut-9), the modules (hut-6, hut-10), the scratch-pad (hut-7) and the digits (hut-8)."""
