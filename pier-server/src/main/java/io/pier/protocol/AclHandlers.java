package io.pier.protocol;

import io.pier.security.acl.AclAuthorizer;
import io.pier.service.MetadataWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.message.CreateAclsRequestData;
import org.apache.kafka.common.message.CreateAclsResponseData;
import org.apache.kafka.common.message.DeleteAclsResponseData;
import org.apache.kafka.common.message.DescribeAclsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.requests.CreateAclsResponse;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsResponse;
import org.apache.kafka.common.requests.DescribeAclsRequest;
import org.apache.kafka.common.requests.DescribeAclsResponse;

/**
 * CreateAcls, DescribeAcls and DeleteAcls (v0-3), what {@code kafka-acls} and Admin use. Who may
 * call them (ALTER / DESCRIBE on the cluster) is checked in front of these handlers; with
 * authorization off the APIs answer SECURITY_DISABLED, as Kafka does without an authorizer.
 */
public final class AclHandlers {
    /** Null when authorization is off. */
    private final AclAuthorizer acls;
    /** Changes are stored off the event loops, one at a time. */
    private final MetadataWriter writer;

    public AclHandlers(AclAuthorizer acls, MetadataWriter writer) {
        this.acls = acls;
        this.writer = writer;
    }

    public CompletableFuture<AbstractResponse> createAcls(ApiRequest request) {
        CreateAclsRequest in = request.bodyAs(CreateAclsRequest.class);
        if (acls == null) {
            return Access.refuse(request, Errors.SECURITY_DISABLED);
        }
        List<AclBinding> bindings = new ArrayList<>();
        List<ApiException> unreadable = new ArrayList<>();
        for (CreateAclsRequestData.AclCreation c : in.aclCreations()) {
            try {
                bindings.add(CreateAclsRequest.aclBinding(c));
                unreadable.add(null);
            } catch (IllegalArgumentException e) {
                unreadable.add(new InvalidRequestException(e.getMessage()));
            }
        }
        return writer.write(() -> acls.create(bindings)).thenApply(created -> {
            CreateAclsResponseData out = new CreateAclsResponseData();
            int next = 0;
            for (ApiException bad : unreadable) {
                ApiException error = bad != null ? bad : created.get(next++);
                ApiError e = error == null ? ApiError.NONE : ApiError.fromThrowable(error);
                out.results().add(new CreateAclsResponseData.AclCreationResult().setErrorCode(e.error().code())
                        .setErrorMessage(e.message()));
            }
            return new CreateAclsResponse(out);
        });
    }

    public CompletableFuture<AbstractResponse> describeAcls(ApiRequest request) {
        DescribeAclsRequest in = request.bodyAs(DescribeAclsRequest.class);
        if (acls == null) {
            return Access.refuse(request, Errors.SECURITY_DISABLED);
        }
        DescribeAclsResponseData out = new DescribeAclsResponseData()
                .setResources(DescribeAclsResponse.aclsResources(acls.describe(in.filter())));
        return CompletableFuture.completedFuture(new DescribeAclsResponse(out, request.version()));
    }

    public CompletableFuture<AbstractResponse> deleteAcls(ApiRequest request) {
        DeleteAclsRequest in = request.bodyAs(DeleteAclsRequest.class);
        if (acls == null) {
            return Access.refuse(request, Errors.SECURITY_DISABLED);
        }
        List<AclBindingFilter> filters = in.filters();
        return writer.write(() -> acls.delete(filters)).thenApply(removed -> {
            DeleteAclsResponseData out = new DeleteAclsResponseData();
            for (List<AclBinding> matched : removed) {
                DeleteAclsResponseData.DeleteAclsFilterResult r = new DeleteAclsResponseData.DeleteAclsFilterResult();
                matched.forEach(b -> r.matchingAcls().add(DeleteAclsResponse.matchingAcl(b, ApiError.NONE)));
                out.filterResults().add(r);
            }
            return new DeleteAclsResponse(out, request.version());
        });
    }
}
