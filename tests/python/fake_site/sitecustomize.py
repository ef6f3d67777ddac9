"""A job's own sitecustomize, which fp8scope's (probes/python/fp8scope/_boot) hides on the path and must still run."""
print("job_sitecustomize_ran=True")
