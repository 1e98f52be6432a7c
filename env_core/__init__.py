"""Scenarios, tools, faults and the per-episode environment. Never calls a model, never knows about Ray."""
