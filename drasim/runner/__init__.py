"""Executes scenarios: builds the simulated node, drives steps, checks expectations."""
