-- wrk: POST the JSON in the file named by $BODY to the URL's path.
local f = assert(io.open(os.getenv("BODY")))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
