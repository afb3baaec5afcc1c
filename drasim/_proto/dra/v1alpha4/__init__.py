"""Generated from protos/; do not edit."""
