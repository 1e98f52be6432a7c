"""The agent side: model clients, built-in policies, the agent loop and the episode runner."""
