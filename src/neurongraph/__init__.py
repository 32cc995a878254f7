"""Neuron Graph RAG: retrieval that finds the few original sources an agent needs."""
__version__ = "0.1.0"
