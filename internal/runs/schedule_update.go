package runs

import (
	"context"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The SDK's schedule update (ScheduleHandle.Update) describes the schedule, hands the
// description to DoUpdate and sends the result without the description's conflict token, so
// Temporal applies it over whatever changed in between, an operator's pause included.
// ScheduleConflictInterceptor closes that gap at the gRPC layer: inside a context from
// ConditionalScheduleUpdate it remembers the conflict token of the DescribeSchedule answer
// and puts it on the UpdateSchedule request that follows. Temporal then drops the update if
// anything changed the schedule since that description (a pause or an unpause changes the
// token); the caller sees that (ScheduleUpdateCondition.Described gives the description's
// update time, which only a full update moves) and redoes the update on a fresh description.

// ScheduleConflictDialOptions are the dial options of every client that updates schedules
// (worker.DialTemporal, the tests' clients).
func ScheduleConflictDialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(ScheduleConflictInterceptor)}
}

type scheduleConditionKey struct{}

// ScheduleUpdateCondition is what the interceptor saw of one ScheduleHandle.Update.
type ScheduleUpdateCondition struct {
	described  bool
	token      []byte
	updateTime *timestamppb.Timestamp
	sent       bool
}

// ConditionalScheduleUpdate returns a context under which the SDK's next schedule update is
// conditional on the description it received.
func ConditionalScheduleUpdate(ctx context.Context) (context.Context, *ScheduleUpdateCondition) {
	c := &ScheduleUpdateCondition{}
	return context.WithValue(ctx, scheduleConditionKey{}, c), c
}

// Described reports whether the interceptor saw the description (false: the client was
// dialed without ScheduleConflictDialOptions) and the schedule's last full update then.
func (c *ScheduleUpdateCondition) Described() (*timestamppb.Timestamp, bool) {
	return c.updateTime, c.described
}

// Sent reports whether an update was sent (false: DoUpdate skipped it).
func (c *ScheduleUpdateCondition) Sent() bool { return c.sent }

// ScheduleConflictInterceptor is the unary client interceptor of ScheduleConflictDialOptions.
// Calls outside a ConditionalScheduleUpdate context pass through untouched.
func ScheduleConflictInterceptor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	c, _ := ctx.Value(scheduleConditionKey{}).(*ScheduleUpdateCondition)
	if c == nil {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	if u, ok := req.(*workflowservice.UpdateScheduleRequest); ok && c.described {
		u.ConflictToken = c.token
		c.sent = true
	}
	err := invoker(ctx, method, req, reply, cc, opts...)
	if d, ok := reply.(*workflowservice.DescribeScheduleResponse); ok && err == nil {
		c.described, c.token, c.updateTime = true, d.GetConflictToken(), d.GetInfo().GetUpdateTime()
	}
	return err
}
